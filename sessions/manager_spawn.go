package sessions

import (
	"sync"

	"github.com/zwarm/zwarm/sessions/runner"
	"github.com/zwarm/zwarm/sessions/telemetry"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// SpawnRequest is a new session.
type SpawnRequest struct {
	Task       string
	Adapter    string        // "" means config default_adapter, else "codex"
	Model      string        // "" means config, else the adapter's default
	WorkingDir string        // "" means the current directory
	Sandbox    string        // "" means config, else the adapter's default
	Source     record.Source // zero means a person
	// Isolation is IsolationWorktree or IsolationNone; "" means config
	// [worktrees] isolation, else a worktree inside a git repository and
	// in place outside one.
	Isolation string
	// Base is the commit-ish the worktree starts from ("" means the HEAD
	// of the checkout WorkingDir is in); WithChanges starts it from HEAD
	// with the checkout's uncommitted changes on top.
	Base        string
	WithChanges bool
	// Limit, above zero, is how many sessions of Source may run at once:
	// a spawn that would be one more is refused with a *LimitError. The
	// check holds across processes sharing the state dir.
	Limit int
	// Runner is where the supervisor runs: "" means config.toml's
	// [runner] kind, else this host ("local").
	Runner string
	// Role names a [roles.NAME] table of config.toml whose settings fill
	// what the request leaves empty (Config.ApplyRole).
	Role string
	// ReasoningEffort is how hard the model thinks ("" means the agent's
	// own default): codex none/minimal/low/medium/high/xhigh, claude
	// low/medium/high/xhigh/max.
	ReasoningEffort string
	// Instructions are given to the agent on every turn, beside the task
	// (normally a role's).
	Instructions string
	// MaxCostUSD, above zero, stops the session once its cost passes it.
	// It needs a known price for the model (or an agent that reports its
	// own cost): otherwise the spawn is refused.
	MaxCostUSD float64
	// Resources are what its jobs ask of a cluster over the runner's
	// settings (config.ResourceKeys: partition, time, cpus, mem, gres,
	// account, qos, constraint), over its role's. Only a worker that
	// runs under a runner can have them.
	Resources map[string]string
}

// Spawn records a session and starts its supervisor, which runs the agent
// in the background. It returns once the supervisor is running; the agent's
// work goes on after the caller exits. A request that cannot run (no such
// adapter, a missing binary, a bad setting) is refused before anything is
// recorded.
func (m *Manager) Spawn(ctx context.Context, req SpawnRequest) (*record.Session, error) {
	task := strings.TrimSpace(req.Task)
	if err := config.CheckText("task", task, "say what the agent should do, e.g. zwarm spawn \"fix the failing test\""); err != nil {
		return nil, err
	}
	s, err := m.newRecord(ctx, req, task)
	if err != nil {
		return nil, err
	}
	self, err := proc.RefOf(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("spawn: %w", err)
	}
	self.Role = record.RoleSpawn
	s.Owner = self
	if err := m.createWithin(ctx, s, req.Limit); err != nil {
		return nil, err
	}
	if err := m.startSupervisor(ctx, s.ID); err != nil {
		// Nothing ran: leave nothing behind rather than a record of a
		// session that never was.
		if rmErr := m.st.Remove(context.WithoutCancel(ctx), s.ID); rmErr != nil {
			return nil, fmt.Errorf("%w (and its record could not be removed: %v)", err, rmErr)
		}
		return nil, fmt.Errorf("%w%s", err, state.NoSpaceHint(err))
	}
	return m.Get(ctx, s.ID)
}

// Together runs fn(i, ctx) for each i below n at once: the Spawns made
// with those contexts (spawn -n, a reply's delegate calls) are submitted
// as one under a runner that can (Slurm: a job array).
func Together(ctx context.Context, n int, fn func(i int, ctx context.Context)) {
	var wg sync.WaitGroup
	for i, slot := range runner.NewBatch(n) {
		c := runner.WithSlot(ctx, slot)
		wg.Go(func() {
			defer runner.Leave(c) // a call that came to no Spawn holds no one up
			fn(i, c)
		})
	}
	wg.Wait()
}

// SpawnAll is Spawn of each of reqs, Together, its results by index.
func (m *Manager) SpawnAll(ctx context.Context, reqs []SpawnRequest) ([]*record.Session, []error) {
	out, errs := make([]*record.Session, len(reqs)), make([]error, len(reqs))
	Together(ctx, len(reqs), func(i int, ctx context.Context) { out[i], errs[i] = m.Spawn(ctx, reqs[i]) })
	return out, errs
}

// newRecord is the record of the session req asks for, with everything
// that can refuse it checked before the state dir is touched: a refused
// spawn makes nothing (create proves the state dir writable, before
// anything starts).
func (m *Manager) newRecord(ctx context.Context, req SpawnRequest, task string) (*record.Session, error) {
	if err := m.trusted(); err != nil {
		return nil, err
	}
	if err := m.st.CheckUsable(); err != nil {
		return nil, err
	}
	cfg, err := m.Config()
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckAdapters(m.st.Dir(), m.adapters.Names()); err != nil {
		return nil, err
	}
	if err := cfg.CheckTelemetry(); err != nil {
		return nil, err
	}
	if req, err = ApplyRole(cfg, req); err != nil {
		return nil, err
	}
	runnerName, err := m.runners.Choose(req.Runner, cfg)
	if err != nil {
		return nil, err
	}
	name := state.FirstNonBlank(req.Adapter, cfg.SpawnAdapter())
	ad, err := m.adapters.Lookup(name)
	if err != nil {
		return nil, config.Invalidf("%v", err)
	}
	acfg := cfg.Adapter(name)
	dir, err := workingDir(req.WorkingDir)
	if err != nil {
		return nil, err
	}
	src := req.Source
	if src.IsZero() {
		src = record.UserSource
	}
	s := state.Pending(&record.Session{
		ID: store.NewID(), Task: req.Task, Adapter: name,
		Model:      state.FirstNonBlank(req.Model, acfg.Model, ad.DefaultModel(m.st.Dir())),
		Sandbox:    state.FirstNonBlank(req.Sandbox, acfg.Sandbox),
		WorkingDir: dir, Source: src, CreatedAt: time.Now().UTC(), Turns: []record.Turn{},
		Role: req.Role, ReasoningEffort: strings.TrimSpace(req.ReasoningEffort), Instructions: req.Instructions,
		MaxCostUSD: req.MaxCostUSD,
		// The span of the caller (an orchestrator's tool call) is the
		// parent of the session's: its spans join the caller's trace.
		TraceParent: telemetry.Parent(ctx),
	})
	if err := state.CheckCostLimit(s, ad, cfg.PriceTable()); err != nil {
		return nil, err
	}
	if err := m.jobOf(s, cfg, runnerName, req); err != nil {
		return nil, err
	}
	ws, err := state.PlanWorkspace(ctx, cfg, state.WorkspaceRequest{Isolation: req.Isolation, Base: req.Base, WithChanges: req.WithChanges}, dir, s.ID)
	if err != nil {
		return nil, err
	}
	if ws != nil {
		s.Workspace, s.WorkingDir, dir = ws, ws.Dir(), ws.Dir()
	}
	// Build the first command now, so a missing binary or a bad option is
	// reported to whoever asked, and nothing is recorded for a spawn that
	// could never run.
	if _, err := ad.Command(agent.TurnRequest{StateDir: m.st.Dir(), SessionID: s.ID, Prompt: task,
		Model: s.Model, WorkingDir: dir, Sandbox: s.Sandbox, Config: acfg,
		ReasoningEffort: s.ReasoningEffort, Instructions: s.Instructions}); err != nil {
		if errors.Is(err, config.ErrInvalidRequest) || errors.As(err, new(*config.Error)) {
			return nil, state.RoleSaid(req.Role, err) // a wrong option, or settings file of the agent's
		}
		return nil, fmt.Errorf("%w: %v", ErrCannotRun, err)
	}
	return s, nil
}

// ErrCannotRun marks a request this machine cannot carry out as it is set
// up (an agent's binary is missing): nothing was recorded or started.
var ErrCannotRun = state.ErrCannotRun

func workingDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("working dir %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", config.Invalidf("working dir %s does not exist: create it or pass an existing one with -C", abs)
	}
	if !fi.IsDir() {
		return "", config.Invalidf("working dir %s is not a directory", abs)
	}
	return abs, nil
}

// startSupervisor runs the supervisor through a short-lived intermediate
// process (`--detach`), which starts the real one in a new session (setsid)
// and exits. The supervisor is therefore nobody's child here: it outlives
// the caller and never becomes a zombie of a long-running front end.
func (m *Manager) startSupervisor(ctx context.Context, id string) error {
	fail := func(err error) error {
		err = fmt.Errorf("start supervisor for %s: %w", record.ShortID(id), err)
		m.st.Record(id, func(tx *state.Tx) error {
			s := tx.Session()
			if s.Owner == nil || s.Owner.Role != record.RoleSpawn || s.Owner.PID != os.Getpid() {
				return nil // a supervisor did start, or someone took over
			}
			if err := tx.FailStart(err.Error(), time.Now().UTC()); err != nil {
				return err
			}
			// Nobody is left to deliver what is queued (the follow-up this
			// command sent, if it sent one): it is reported undelivered
			// rather than delivered by whatever next starts the session,
			// after a retry of it. The failure is recorded all the same.
			if derr := m.st.DropQueued(s, err.Error()); derr != nil {
				m.warn(fmt.Errorf("session %s: %w", record.ShortID(id), derr))
			}
			return nil
		})
		return err
	}
	if len(m.supervisorArgv) == 0 {
		return fail(errors.New("no supervisor command configured"))
	}
	if s, err := m.st.Load(id); err == nil && state.Remote(s) {
		if err := m.submit(ctx, s); err != nil {
			return fail(err)
		}
		return nil
	}
	args := append(append([]string{}, m.supervisorArgv[1:]...), "--state-dir", m.st.Dir(), "--detach", id)
	out, stderr, err := m.detach(ctx, args)
	// A Ctrl+C meant for this command reaches the starter too if it comes
	// between its fork and its leaving this command's process group: it
	// dies of the signal before it has started anything. The command
	// finishes what it began: the starter is run again.
	for try := 1; try < detachTries && diedOfSignal(err); try++ {
		out, stderr, err = m.detach(ctx, args)
	}
	if err != nil {
		return fail(fmt.Errorf("%w: %s", err, stderr))
	}
	var ref proc.Ref
	if err := json.Unmarshal(out, &ref); err != nil {
		return fail(fmt.Errorf("bad answer from detach: %q", out))
	}
	// The supervisor may already have claimed the session; if not, record
	// it now so that nobody ever sees an owner-less pending session. If it
	// already finished (a fast turn), it has cleared the owner: only a
	// record still naming this process is handed over.
	_, err = m.st.Update(id, func(tx *state.Tx) error {
		s := tx.Session()
		if s.Owner != nil && s.Owner.Role == record.RoleSpawn && s.Owner.PID == os.Getpid() {
			s.Owner = &ref
		}
		return nil
	})
	return err
}

// detachTries bounds the starts of a supervisor's starter that a signal
// cut short (startSupervisor).
const detachTries = 3

// detach runs the supervisor's starter (`zwarm __supervise --detach ID`)
// and returns what it printed: the supervisor's ProcRef, and its errors.
func (m *Manager) detach(ctx context.Context, args []string) (out []byte, stderr string, err error) {
	cmd := exec.CommandContext(ctx, m.supervisorArgv[0], args...)
	// A group of its own: Ctrl+C at the terminal interrupts the command,
	// not the supervisor it is starting (Inject finishes what it began).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var e strings.Builder
	cmd.Stderr = &e
	out, err = cmd.Output()
	return out, strings.TrimSpace(e.String()), err
}

// diedOfSignal says err is a process's death by a signal.
func diedOfSignal(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

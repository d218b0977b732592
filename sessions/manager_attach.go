package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
	"github.com/zwarm/zwarm/sessions/telemetry"
)

// ErrAttached is returned (wrapped) for a session a person is attached to
// (zwarm attach): it is not settled, and nothing but the person may work
// in its thread until they leave the CLI.
var ErrAttached = errors.New("a person is attached to it")

// AttachOptions say how to attach to a session.
type AttachOptions struct {
	// Interrupt stops the running turn first (as Interrupt does) and hands
	// the thread to the person once it has stopped. Without it, a session
	// that is not settled is refused (ErrRunning).
	Interrupt bool
	// Waiting, if set, is told once the attach waits for turn n to stop;
	// Starting, once it waits for a turn that has not started (a job in
	// its cluster's queue, a worktree being made) to run, to stop it.
	Waiting  func(n int)
	Starting func()
}

// Attachment is a session attached to this process: a person is to work
// in the agent's own CLI, Command, in the session's thread and dir, until
// Run returns. Meanwhile no turn starts (follow-ups queue) and kill
// refuses the session. Should this process die, the next reader of the
// session finds its owner gone and settles it again.
type Attachment struct {
	Session *record.Session
	Command agent.Command
	m       *Manager
	id      string
	self    proc.Ref
	grace   time.Duration
}

// Attach attaches a settled session to this process, for a person to work
// in its agent's own CLI (Attachment.Run). The CLI resumes the session's
// thread, with its model and sandbox, in its dir (its worktree, if it has
// one); what the person does there becomes part of the thread, and later
// follow-ups continue it. A session still running is refused (ErrRunning)
// unless opt.Interrupt: then its turn is stopped and recorded
// interrupted, and the session is handed to this process as it ends.
func (m *Manager) Attach(ctx context.Context, idOrPrefix string, opt AttachOptions) (*Attachment, error) {
	if state.InSupervisor() {
		return nil, errors.New("attach: not in a supervisor process")
	}
	if err := m.trusted(); err != nil {
		return nil, err
	}
	id, err := listing.Resolve(m.st, idOrPrefix)
	if err != nil {
		return nil, err
	}
	loaded, err := m.st.Load(id)
	if err != nil {
		return nil, err
	}
	if loaded.Legacy {
		return nil, fmt.Errorf("attach %s: written by the Python zwarm; this zwarm only reads it", record.ShortID(id))
	}
	// The command is built before anything changes, so a missing binary
	// or an adapter without a CLI is refused with the session as it was.
	if loaded.ThreadID != "" {
		if _, err := m.interactiveCommand(loaded); err != nil {
			return nil, fmt.Errorf("attach %s: %w", record.ShortID(id), err)
		}
	}
	self, err := proc.RefOf(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", record.ShortID(id), err)
	}
	self.Role, self.Token = record.RoleAttach, store.NewID()
	waiting := false
	take := func() (*record.Session, error) {
		return m.st.UpdateSettled(m.writing(ctx), id, func(tx *state.Tx) (err error) {
			waiting, err = m.takeForAttach(ctx, tx, self, opt)
			return err
		})
	}
	s, err := take()
	if errors.Is(err, errStarting) && opt.Starting != nil {
		opt.Starting()
	}
	for errors.Is(err, errStarting) && opt.Interrupt {
		// A turn about to start is interrupted once it runs, as
		// inject --interrupt's message waits for it.
		if _, err = m.waitUntil(ctx, id, func(s *record.Session) (bool, error) { return s.Status() != record.StatusPending, nil }); err == nil {
			s, err = take()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("attach %s: %w", record.ShortID(id), err)
	}
	a := &Attachment{m: m, id: id, self: *self, grace: config.DefaultKillGrace}
	if cfg, err := m.Config(); err == nil {
		a.grace = cfg.Grace()
	}
	if waiting {
		if opt.Waiting != nil {
			opt.Waiting(s.Interrupt.Turn)
		}
		if s, err = a.handedOver(ctx); err != nil {
			return nil, fmt.Errorf("attach %s: %w", record.ShortID(id), err)
		}
	}
	a.Session = s
	if a.Command, err = m.interactiveCommand(s); err != nil {
		a.finish(ctx, nil, "its CLI could not be started: "+err.Error())
		return nil, fmt.Errorf("attach %s: %w", record.ShortID(id), err)
	}
	return a, nil
}

// errStarting is a session whose turn is about to start: an attach
// --interrupt waits for it to run.
var errStarting = fmt.Errorf("%w, and its turn is starting", ErrRunning)

// attachedError is ErrAttached, saying who is attached since when.
func attachedError(s *record.Session) error {
	pid, since := 0, ""
	if s.Owner != nil {
		pid = s.Owner.PID
	}
	if n := len(s.Attaches); n > 0 {
		since = ", since " + s.Attaches[n-1].Start.Local().Format("15:04:05")
	}
	return fmt.Errorf("%w (zwarm attach, pid %d%s): it settles when they leave the CLI", ErrAttached, pid, since)
}

// worktreeThere refuses to attach to a session whose worktree is gone (it
// was landed and removed, or deleted): the CLI would open elsewhere. A
// follow-up has the supervisor make it again.
func worktreeThere(s *record.Session) error {
	ws := s.Workspace
	if ws == nil || ws.State == record.WorkspaceReady && ws.Worktree().Exists() {
		return nil
	}
	return fmt.Errorf("its worktree %s is not there (landed and removed, or never made): a follow-up (zwarm inject) makes it again; attach after that", ws.Path)
}

// handedOver waits until the supervisor, having stopped the turn, hands
// the session to this process. Given up (ctx), the request is withdrawn:
// the turn is stopped all the same, and the session goes on (or settles)
// without the person.
func (a *Attachment) handedOver(ctx context.Context) (*record.Session, error) {
	s, err := a.m.waitUntil(ctx, a.id, func(s *record.Session) (bool, error) {
		if a.mine(s) {
			return true, nil
		}
		if r := s.Interrupt; r == nil || r.Attacher == nil || r.Attacher.Token != a.self.Token {
			return true, fmt.Errorf("its turn was not handed over: the session is %s%s", s.Status(), errorSuffix(s.Error))
		}
		return false, nil
	})
	if err == nil || ctx.Err() == nil {
		return s, err
	}
	// Given up: nobody is to take the thread, and if it was handed over
	// meanwhile, it settles again at once.
	wctx := context.WithoutCancel(ctx)
	if _, werr := a.m.st.UpdateCtx(a.m.writing(wctx), a.id, func(tx *state.Tx) error {
		tx.WithdrawAttach(a.self.Token)
		return nil
	}); werr != nil {
		return nil, fmt.Errorf("%w (and the request to attach could not be withdrawn: %v)", err, werr)
	}
	if cur, gerr := a.m.st.Load(a.id); gerr == nil && a.mine(cur) {
		a.finish(wctx, nil, "zwarm attach gave up before the CLI started")
	}
	return nil, err
}

func errorSuffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

// mine reports whether s is attached to this Attachment.
func (a *Attachment) mine(s *record.Session) bool {
	return s.Status() == record.StatusAttached && s.Owner != nil && s.Owner.Token == a.self.Token
}

// turnRequest is what an adapter is asked for a turn in s's thread, with
// cfg's settings for s's adapter.
func (m *Manager) turnRequest(s *record.Session, cfg *config.Config) agent.TurnRequest {
	return agent.TurnRequest{StateDir: m.st.Dir(), SessionID: s.ID, Model: s.Model, WorkingDir: s.WorkingDir,
		Sandbox: s.Sandbox, ThreadID: s.ThreadID, Config: cfg.Adapter(s.Adapter)}
}

// interactiveCommand is the agent's CLI resuming the session's thread.
func (m *Manager) interactiveCommand(s *record.Session) (agent.Command, error) {
	ad, err := m.adapters.Lookup(s.Adapter)
	if err != nil {
		return agent.Command{}, err
	}
	cfg, err := m.Config()
	if err != nil {
		return agent.Command{}, err
	}
	req := m.turnRequest(s, cfg)
	if ws := s.Workspace; ws != nil && ws.State == record.WorkspaceReady {
		req.Worktree, req.GitDirs = true, ws.Worktree().WritableGitDirs()
	}
	return ad.Interactive(req)
}

// Run runs the agent's CLI in the foreground, on the person's terminal
// (stdin, stdout, stderr), until they leave it; then commits what they
// left in the worktree and settles the session again as it was, recording
// the attached span (or, with follow-ups queued meanwhile, starts them).
// The person's Ctrl+C is the CLI's: Run does not stop it for a signal
// that reaches the whole terminal. ctx ending stops the CLI as a kill
// stops an agent (SIGTERM, the grace period, SIGKILL): a signal to zwarm
// alone. The CLI gets SIGTERM if this process dies.
func (a *Attachment) Run(ctx context.Context, stdin, stdout, stderr *os.File) (*record.Session, error) {
	held := a.m.st.ContainAttach(a.id)
	newCmd := func(inCgroup bool) *exec.Cmd {
		cmd := exec.Command(a.Command.Path, a.Command.Args...)
		cmd.Dir, cmd.Env = a.Command.Dir, append(os.Environ(), a.Command.Env...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		held.Command(cmd, inCgroup)
		return cmd
	}
	cmd := newCmd(true)
	err := cmd.Start()
	if err != nil && held.InCgroup() {
		cmd = newCmd(false) // a cgroup it cannot start in: the marker holds it
		err = cmd.Start()
	}
	if err != nil {
		held.Sweep(context.WithoutCancel(ctx))
		err = fmt.Errorf("start %s: %w", a.Command.Path, err)
		a.finish(ctx, nil, "its CLI could not be started: "+err.Error())
		return nil, fmt.Errorf("attach %s: %w", record.ShortID(a.id), err)
	}
	if ref, err := proc.RefOf(cmd.Process.Pid); err == nil {
		a.m.st.Update(a.id, func(tx *state.Tx) error {
			s := tx.Session()
			if a.mine(s) {
				s.Attaches[len(s.Attaches)-1].CLI = ref
			}
			return nil
		})
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-exited:
	case <-ctx.Done():
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case werr = <-exited:
		case <-time.After(a.grace):
			cmd.Process.Kill()
			werr = <-exited
		}
	}
	// What the person started and left running (a server in the
	// background) ends with the span, as a turn's does.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	held.Sweep(sctx)
	cancel()
	code := cmd.ProcessState.ExitCode()
	if code < 0 {
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	note := ""
	if ctx.Err() != nil {
		note = "zwarm attach was stopped, and stopped the CLI"
	} else if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		// Killed, not failed to start, however soon.
		note = fmt.Sprintf("its CLI was killed by %s", unix.SignalName(ws.Signal()))
	} else if _, ok := werr.(*exec.ExitError); werr != nil && !ok {
		note = fmt.Sprintf("waiting for the CLI failed: %v", werr)
	}
	return a.finish(ctx, &code, note)
}

// Release settles the session again without the person having worked in
// it: the CLI was never run (why says so).
func (a *Attachment) Release(ctx context.Context, why string) (*record.Session, error) {
	return a.finish(ctx, nil, why)
}

// finish ends the attach: what is left in the worktree is committed, the
// session settles as it was before (the span recorded with exit and note),
// and follow-ups queued meanwhile start at once, as a follow-up to a
// settled session does. It is done whatever ctx says: an attach is never
// left half ended.
func (a *Attachment) finish(ctx context.Context, exit *int, note string) (*record.Session, error) {
	ctx = context.WithoutCancel(ctx)
	var work *state.TurnWork
	if cur, err := a.m.st.Load(a.id); err == nil && a.mine(cur) && cur.Workspace != nil && cur.Workspace.Worktree().Exists() {
		gctx, cancel := context.WithTimeout(ctx, gitTimeout)
		work = state.CommitWork(gctx, cur.Workspace, fmt.Sprintf("zwarm %s attached: what was done in its CLI", record.ShortID(a.id)), "the attached work")
		cancel()
	}
	spent := a.spent()
	restart := false
	s, err := a.m.st.ChangeCtx(a.m.writing(ctx), a.id, func(tx *state.Tx) error {
		s := tx.Session()
		if !a.mine(s) {
			return fmt.Errorf("it is no longer attached to this zwarm (it is %s)", s.Status())
		}
		if err := tx.Detach(exit, note, time.Now().UTC()); err != nil {
			return err
		}
		state.RecordAttachWork(s, work)
		if spent != nil && state.RecordAttachSpent(s, spent) {
			s.Refresh(a.m.prices())
		}
		if s.PendingInjects == 0 {
			return nil
		}
		owner, err := proc.RefOf(os.Getpid())
		if err != nil {
			return err
		}
		owner.Role = record.RoleSpawn
		if err := state.WriteReserve(a.m.st.ReservePath(a.id)); err != nil {
			return fmt.Errorf("cannot reserve space for the session: %w%s", err, state.NoSpaceHint(err))
		}
		restart = true
		return tx.Reopen(*owner)
	}, true)
	if err != nil {
		return nil, fmt.Errorf("attach %s: settle it again: %w", record.ShortID(a.id), err)
	}
	if cfg, err := a.m.Config(); err == nil {
		telemetry.SendAttach(cfg, s) // with telemetry on, the span into the session's trace
	}
	if restart {
		if err := a.m.startSupervisor(ctx, a.id); err != nil {
			return s, fmt.Errorf("attach %s: start the follow-ups queued meanwhile: %w", record.ShortID(a.id), err)
		}
	}
	return s, nil
}

// gitTimeout bounds the commit of what a person left in the worktree.
const gitTimeout = 30 * time.Second

// attacherDiedNote is what an attach span says of an attacher (owner)
// that died without settling its session.
func attacherDiedNote(owner *proc.Ref) string {
	pid := 0
	if owner != nil {
		pid = owner.PID
	}
	return fmt.Sprintf("zwarm attach (pid %d) died without settling the session", pid)
}

// attacherGone settles a session whose attaching command died: the
// person's CLI goes too (it was told to when its command died; a CLI
// still alive is killed), and the follow-ups queued meanwhile are
// reported undelivered, since nobody is left to start them. Callers hold
// the lock.
func (m *Manager) attacherGone(tx *state.Tx) error {
	s := tx.Session()
	note := attacherDiedNote(s.Owner)
	if n := len(s.Attaches); n > 0 {
		if cli := s.Attaches[n-1].CLI; cli != nil && cli.Signal(syscall.SIGKILL) == nil {
			note += fmt.Sprintf("; zwarm stopped its CLI (pid %d)", cli.PID)
		}
	}
	if err := tx.Detach(nil, note, time.Now().UTC()); err != nil {
		return err
	}
	return m.st.DropQueued(s, "the zwarm attach it waited for died before it was delivered: send it again")
}

// spent asks the agent's own session logs what the person's calls in its
// CLI used, from the span's start to now, and in which thread they left
// it; nil when they cannot say.
func (a *Attachment) spent() *state.AttachSpent {
	s, err := a.m.st.Load(a.id)
	if err != nil {
		return nil
	}
	ad, err := a.m.adapters.Lookup(s.Adapter)
	if err != nil {
		return nil
	}
	return state.ReadAttachSpent(ad, s, s.Workspace != nil, time.Now())
}

// prices is the price table of the state dir's config (the defaults when
// it cannot be read).
func (m *Manager) prices() record.Prices {
	if cfg, err := m.Config(); err == nil {
		return cfg.PriceTable()
	}
	return record.DefaultPrices()
}

// takeForAttach hands s (held under its lock) to the person's attaching
// command self: a settled session at once; a running one, with
// opt.Interrupt, once its turn is interrupted (waiting). It refuses a
// session being stopped, landed or updated, or attached already.
func (m *Manager) takeForAttach(ctx context.Context, tx *state.Tx, self *proc.Ref, opt AttachOptions) (waiting bool, err error) {
	s := tx.Session()
	now := time.Now().UTC()
	if s.Stopping() || state.KillFinishing(s, now) {
		return false, fmt.Errorf("%w; attach once it has stopped", ErrStopping)
	}
	if err := s.Busy(); err != nil {
		return false, err // a landing works in the worktree
	}
	if alive, known := m.ownerAlive(ctx, s); !s.Settled() && !alive && known {
		if err := m.abandonLocked(tx); err != nil {
			return false, err
		}
	}
	switch {
	case s.Status() == record.StatusAttached:
		return false, attachedError(s)
	case s.Settled():
		if err := worktreeThere(s); err != nil {
			return false, err
		}
		// As for a follow-up: the end of the attach is recorded even
		// on a disk that fills up meanwhile.
		if err := state.WriteReserve(m.st.ReservePath(s.ID)); err != nil {
			return false, fmt.Errorf("cannot reserve space for the session: %w%s", err, state.NoSpaceHint(err))
		}
		return false, tx.Attach(*self, now)
	case !opt.Interrupt:
		return false, fmt.Errorf("%w: wait, or attach --interrupt to stop its turn first", ErrRunning)
	case s.Status() == record.StatusPending && s.Stop == nil:
		return false, errStarting
	case !s.Interruptible():
		return false, fmt.Errorf("%w, and no turn of it can be interrupted now (%s): wait, then attach", ErrRunning, s.NotInterruptible())
	}
	return true, tx.InterruptTurn(record.InterruptRequest{At: now, Attacher: self})
}

package sessions

import (
	"bufio"
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
)

// Manager is the API every front end uses: the CLI, the dashboard and the
// orchestrator's tools.
type Manager struct {
	st       *Store
	adapters Adapters
	// supervisorArgv is the command that runs Supervise: the zwarm binary
	// and its hidden subcommand. Detach and the session id are appended.
	supervisorArgv []string
}

// NewManager returns a manager for the store. supervisorArgv is the command
// line that reaches RunSupervisor, e.g. {"/usr/bin/zwarm", "__supervise"}.
func NewManager(st *Store, adapters Adapters, supervisorArgv []string) *Manager {
	return &Manager{st: st, adapters: adapters, supervisorArgv: supervisorArgv}
}

// Store returns the manager's state directory.
func (m *Manager) Store() *Store { return m.st }

// SpawnRequest is a new session.
type SpawnRequest struct {
	Task       string
	Adapter    string // "" means config default_adapter, else "codex"
	Model      string // "" means config, else the adapter's default
	WorkingDir string // "" means the current directory
	Sandbox    string // "" means config, else the adapter's default
	Source     string // "" means "user"
}

// Spawn records a session and starts its supervisor, which runs the agent
// in the background. It returns once the supervisor is running; the agent's
// work goes on after the caller exits.
func (m *Manager) Spawn(ctx context.Context, req SpawnRequest) (*Session, error) {
	task := strings.TrimSpace(req.Task)
	if task == "" {
		return nil, errors.New("empty task: say what the agent should do, e.g. zwarm spawn \"fix the failing test\"")
	}
	if err := m.st.ensureWritable(); err != nil {
		return nil, err
	}
	cfg, err := LoadConfig(m.st.Dir())
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckAdapters(m.st.Dir(), m.adapters.Names()); err != nil {
		return nil, err
	}
	name := firstNonEmpty(req.Adapter, cfg.DefaultAdapter, "codex")
	ad, err := m.adapters.Lookup(name)
	if err != nil {
		return nil, err
	}
	acfg := cfg.Adapter(name)
	dir, err := workingDir(req.WorkingDir)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	s := &Session{
		ID: newID(), Task: req.Task, Status: StatusPending, Adapter: name,
		Model:      firstNonEmpty(req.Model, acfg.Model, ad.DefaultModel(m.st.Dir())),
		Sandbox:    firstNonEmpty(req.Sandbox, acfg.Sandbox),
		WorkingDir: dir, Source: firstNonEmpty(req.Source, "user"),
		CreatedAt: now, Turns: []Turn{},
	}
	self, err := refOf(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("spawn: %w", err)
	}
	self.Role = roleSpawn
	s.Owner = self

	// Build the first command now, so a missing binary or a bad option is
	// reported to the person who typed the command, not only in a record.
	_, cmdErr := ad.Command(TurnRequest{StateDir: m.st.Dir(), SessionID: s.ID, Prompt: task,
		Model: s.Model, WorkingDir: dir, Sandbox: s.Sandbox, Config: acfg})
	if errors.Is(cmdErr, ErrInvalidRequest) {
		return nil, cmdErr
	}
	if cmdErr != nil {
		s.Status, s.Error, s.Owner, s.EndedAt = StatusFailed, cmdErr.Error(), nil, &now
	}
	if err := m.st.create(s); err != nil {
		return nil, err
	}
	if cmdErr != nil {
		return s, fmt.Errorf("spawn %s: %w", ShortID(s.ID), cmdErr)
	}
	if err := m.startSupervisor(ctx, s.ID); err != nil {
		return s, err
	}
	return m.Get(ctx, s.ID)
}

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
		return "", fmt.Errorf("working dir %s does not exist: create it or pass an existing one with -C", abs)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("working dir %s is not a directory", abs)
	}
	return abs, nil
}

// startSupervisor runs the supervisor through a short-lived intermediate
// process (`--detach`), which starts the real one in a new session (setsid)
// and exits. The supervisor is therefore nobody's child here: it outlives
// the caller and never becomes a zombie of a long-running front end.
func (m *Manager) startSupervisor(ctx context.Context, id string) error {
	fail := func(err error) error {
		err = fmt.Errorf("start supervisor for %s: %w", ShortID(id), err)
		m.st.update(id, func(s *Session) error {
			now := time.Now().UTC()
			s.Status, s.Error, s.Owner, s.EndedAt = StatusFailed, err.Error(), nil, &now
			return nil
		})
		return err
	}
	if len(m.supervisorArgv) == 0 {
		return fail(errors.New("no supervisor command configured"))
	}
	args := append(append([]string{}, m.supervisorArgv[1:]...), "--state-dir", m.st.Dir(), "--detach", id)
	cmd := exec.CommandContext(ctx, m.supervisorArgv[0], args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fail(fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String())))
	}
	var ref ProcRef
	if err := json.Unmarshal(out, &ref); err != nil {
		return fail(fmt.Errorf("bad answer from detach: %q", out))
	}
	// The supervisor may already have claimed the session; if not, record
	// it now so that nobody ever sees an owner-less pending session.
	// If the supervisor already finished (a fast turn), it has cleared the
	// owner: only a record still naming this process is handed over.
	_, err = m.st.update(id, func(s *Session) error {
		if s.Owner != nil && s.Owner.Role == roleSpawn && s.Owner.PID == os.Getpid() {
			s.Owner = &ref
		}
		return nil
	})
	return err
}

// Detach is the intermediate step of startSupervisor: it starts argv (the
// supervisor without --detach) in a new session with stdio detached from
// any terminal, stderr appended to the session's supervisor.log, prints the
// supervisor's ProcRef as JSON and returns.
func Detach(st *Store, id string, argv []string) error {
	if err := validID(id); err != nil {
		return err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	logf, err := os.OpenFile(st.logPath(id), os.O_WRONLY|os.O_CREATE|os.O_APPEND, filePerm)
	if err != nil {
		return fmt.Errorf("detach %s: %w", id, err)
	}
	defer logf.Close()
	p, err := os.StartProcess(argv[0], argv, &os.ProcAttr{
		Files: []*os.File{devnull, devnull, logf},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return fmt.Errorf("detach %s: %w", id, err)
	}
	ref, err := refOf(p.Pid)
	if err != nil {
		return fmt.Errorf("detach %s: supervisor exited at once: %w", id, err)
	}
	ref.Role = roleSupervisor
	p.Release()
	w := bufio.NewWriter(os.Stdout)
	json.NewEncoder(w).Encode(ref)
	return w.Flush()
}

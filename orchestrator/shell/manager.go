package shell

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// firstSessionID is one less than the first session id handed out.
const firstSessionID = 1000

// defaultEnv is added to every command's environment: pagers would wait for
// a key nobody presses, and colour and terminal tricks only cost tokens.
var defaultEnv = []string{"NO_COLOR=1", "TERM=dumb", "COLORTERM=", "PAGER=cat", "GIT_PAGER=cat", "GH_PAGER=cat"}

// ErrClosed is returned by calls made after Close.
var ErrClosed = errors.New("the shell tools are closed: the run has ended")

// Options configure a Manager.
type Options struct {
	Dir   string       // working directory for commands and base of relative workdirs; default the current one
	Shell string       // default shell; default $SHELL, else /bin/bash
	Env   []string     // KEY=VALUE entries added after the inherited environment and the defaults
	Log   *slog.Logger // diagnostics; default discarded
	// Cgroup, when set, is open on a cgroup v2 directory every command
	// starts in (clone3), so that none of its processes can leave it by
	// starting a session of its own: the owner kills the cgroup when the
	// run ends, or whoever finds the owner dead does. A command the cgroup
	// does not take starts without it.
	Cgroup *os.File
}

// Manager runs the commands of one orchestrator run. It is safe for
// concurrent use; calls on one session are served one at a time.
type Manager struct {
	dir    string
	shell  string
	env    []string
	log    *slog.Logger
	grace  time.Duration // between SIGTERM and SIGKILL at Close
	cgroup *os.File

	mu        sync.Mutex
	closed    bool
	next      int
	procs     map[int]*process // started and not yet reported as exited
	finished  map[int]int      // exit codes of sessions reported as exited
	lingering []int            // sessions whose command exited but left processes behind
	owners    sync.WaitGroup   // every process's owner goroutine
}

// New returns a Manager for opt.
func New(opt Options) *Manager {
	m := &Manager{dir: opt.Dir, shell: opt.Shell, log: opt.Log, grace: termGrace, next: firstSessionID,
		procs: map[int]*process{}, finished: map[int]int{}, cgroup: opt.Cgroup}
	if m.dir == "" {
		m.dir, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(m.dir); err == nil {
		m.dir = abs
	}
	if m.shell == "" {
		m.shell = os.Getenv("SHELL")
	}
	if m.shell == "" {
		m.shell = "/bin/bash"
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	m.env = append(append(os.Environ(), defaultEnv...), opt.Env...)
	return m
}

// Exec runs req.Cmd and returns when it exits or its yield time passes,
// whichever comes first. A command still running keeps a session id for
// WriteStdin. If ctx ends first, Exec returns ctx's error and the command
// runs on until Close.
func (m *Manager) Exec(ctx context.Context, req ExecRequest) (Result, error) {
	began := time.Now()
	if err := ctx.Err(); err != nil {
		return Result{}, err // start nothing the caller no longer waits for
	}
	if strings.TrimSpace(req.Cmd) == "" {
		return Result{}, errors.New("cmd is empty: pass the shell command to run")
	}
	yield, warn := clampYield(req.YieldTimeMs, DefaultExecYieldMs)
	budget, err := outputBudget(req.MaxOutputTokens)
	if err != nil {
		return Result{}, err
	}
	dir, err := m.workdir(req.Workdir)
	if err != nil {
		return Result{}, err
	}
	s := spec{shell: m.shell, flag: "-lc", cmd: req.Cmd, dir: dir, env: m.env, tty: req.TTY == nil || *req.TTY}
	if req.Shell != "" {
		s.shell = req.Shell
	}
	if req.Login != nil && !*req.Login {
		s.flag = "-c"
	}
	p, err := m.spawn(s)
	if err != nil {
		return Result{}, err
	}
	defer p.release()
	r, err := m.collect(ctx, p, began, began.Add(yield), budget, warn)
	if err != nil {
		return Result{}, fmt.Errorf("session %d keeps running until the run ends: %w", p.id, err)
	}
	return r, nil
}

// WriteStdin writes req.Chars to a running session, then returns the output
// since the previous call once the process exits or the yield time passes.
func (m *Manager) WriteStdin(ctx context.Context, req WriteRequest) (Result, error) {
	began := time.Now()
	yield, warn := clampYield(req.YieldTimeMs, DefaultWriteYieldMs)
	budget, err := outputBudget(req.MaxOutputTokens)
	if err != nil {
		return Result{}, err
	}
	p, err := m.lookup(req.SessionID)
	if err != nil {
		return Result{}, err
	}
	if err := p.acquire(ctx); err != nil {
		return Result{}, fmt.Errorf("session %d: %w", p.id, err)
	}
	defer p.release()
	if _, err := m.lookup(p.id); err != nil {
		return Result{}, err // a concurrent call reported its exit
	}
	deadline := began.Add(yield)
	if req.Chars != "" && !p.exited() {
		if err := p.write(ctx, req.Chars, deadline); err != nil {
			// The write fails when the process just exited; that is
			// reported as its exit. Otherwise the output stays buffered.
			t := time.NewTimer(time.Until(deadline))
			defer t.Stop()
			select {
			case <-p.done:
			case <-t.C:
				return Result{}, fmt.Errorf("write to session %d: %w", p.id, err)
			case <-ctx.Done():
				return Result{}, fmt.Errorf("write to session %d: %w", p.id, ctx.Err())
			}
		}
	}
	return m.collect(ctx, p, began, deadline, budget, warn)
}

// workdir resolves a requested working directory against the run's.
func (m *Manager) workdir(dir string) (string, error) {
	if dir == "" {
		return m.dir, nil
	}
	abs := dir
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(m.dir, dir)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("workdir %q does not exist (resolved to %s): pass an existing directory, absolute or relative to %s", dir, abs, m.dir)
	case err != nil:
		return "", fmt.Errorf("workdir %q: %w", dir, err)
	case !fi.IsDir():
		return "", fmt.Errorf("workdir %q (resolved to %s) is not a directory: pass a directory", dir, abs)
	}
	return abs, nil
}

// spawn starts s and registers it under a new session id. It holds the
// lock throughout so that Close never misses a process being started.
func (m *Manager) spawn(s spec) (*process, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	s.cgroup = m.cgroup
	p, err := start(s)
	if err != nil && s.cgroup != nil {
		m.log.Warn("shell: cannot start the command in the run's cgroup; starting it without", "err", err)
		s.cgroup = nil
		p, err = start(s)
	}
	if err != nil {
		return nil, err
	}
	m.next++
	p.id = m.next
	m.procs[p.id] = p
	m.owners.Add(1)
	go func() {
		defer m.owners.Done()
		p.own(m.log)
	}()
	m.log.Debug("shell: started", "session", p.id, "pid", p.pid, "cmd", s.cmd, "dir", s.dir, "tty", s.tty)
	return p, nil
}

// lookup finds a running session, or says why there is none.
func (m *Manager) lookup(id int) (*process, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	if p, ok := m.procs[id]; ok {
		return p, nil
	}
	if code, ok := m.finished[id]; ok {
		return nil, fmt.Errorf("session %d is not running (it exited with code %d); start a new command with exec_command", id, code)
	}
	return nil, fmt.Errorf("session %d does not exist: use the id of an exec_command result that says \"Process running with session ID N\", or start a new command with exec_command", id)
}

// collect waits until p exits, the deadline passes or ctx ends, then
// reports the output since the previous call. An exited process is
// forgotten once reported.
func (m *Manager) collect(ctx context.Context, p *process, began, deadline time.Time, budget int, warn string) (Result, error) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	exited := p.exited()
	head, tail, omitted := p.take()
	out, tokens, truncated := truncateGap(head, tail, omitted, budget)
	r := Result{Wall: time.Since(began), Output: out, Warning: warn}
	if truncated {
		r.OriginalTokens = tokens
	}
	if !exited {
		r.SessionID = p.id
		return r, nil
	}
	code := p.code
	r.ExitCode = &code
	m.forget(p)
	return r, nil
}

// forget drops a reported process, remembering its exit code for the
// error a later write_stdin gets, and its session if processes it started
// live on, so that Close still ends them.
func (m *Manager) forget(p *process) {
	left := len(sessionMembers(map[int]bool{p.pid: true})[p.pid]) > 0
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.procs, p.id)
	m.finished[p.id] = p.code
	if left {
		m.lingering = append(m.lingering, p.pid)
	}
}

package sessions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// The files named supervisor*.go run inside `zwarm __supervise ID`, the
// detached process that owns one session while it has work; everything
// else in this package runs in the command (CLI, dashboard, orchestrator)
// that reads and changes sessions.
//
// A supervisor is a child subreaper that waits for every child it has
// (wait4(-1)): no other code may start processes in a supervisor process,
// or the supervisor would take their exit statuses. InSupervisor lets such
// code refuse.

var inSupervisor atomic.Bool

// InSupervisor reports whether this process is a session supervisor, in
// which nothing but the supervisor may start child processes.
func InSupervisor() bool { return inSupervisor.Load() }

// flushEvery bounds how often a running turn's progress is written to
// meta.json: often enough for listings to be current, rarely enough that a
// chatty agent does not turn into a stream of file replacements.
const flushEvery = 250 * time.Millisecond

// supervisor runs the turns of one session, one after another, until no
// follow-up is queued. It is the only process that starts agents.
type supervisor struct {
	st       *Store
	adapters Adapters
	sections []ConfigSection
	id       string
	self     ProcRef
	log      *slog.Logger
	prices   Prices
	cg       *cgroup // nil: marker-only containment
}

// SuperviseOptions configure a supervisor.
type SuperviseOptions struct {
	Store    *Store
	Adapters Adapters
	// ConfigSections are the config.toml tables other packages own, so the
	// supervisor reads the same config as the command that spawned it.
	ConfigSections []ConfigSection
}

// Supervise is the body of `zwarm __supervise ID`: it owns the session until
// its last turn ends. SIGTERM or SIGINT stop it the way `zwarm kill` asks:
// the agent gets SIGTERM, a grace period, then SIGKILL, and every process of
// the session is gone before the kill is recorded.
func Supervise(ctx context.Context, opt SuperviseOptions, id string) error {
	if err := validID(id); err != nil {
		return err
	}
	st := opt.Store
	inSupervisor.Store(true)
	logf, err := OpenAppend(st.dir, st.logPath(id))
	if err != nil {
		return fmt.Errorf("supervise %s: %w", id, err)
	}
	defer logf.Close()
	log := slog.New(slog.NewTextHandler(logf, nil)).With("session", id)

	if err := becomeSubreaper(); err != nil {
		log.Warn("cannot become child subreaper; escaped descendants are found by marker only", "err", err)
	}
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	self, err := refOf(os.Getpid())
	if err != nil {
		return fmt.Errorf("supervise %s: %w", id, err)
	}
	self.Role = roleSupervisor
	sv := &supervisor{st: st, adapters: opt.Adapters, sections: opt.ConfigSections, id: id, self: *self, log: log, prices: DefaultPrices()}
	if cfg, err := LoadConfig(st.Dir(), sv.sections...); err == nil {
		sv.prices = cfg.PriceTable()
	}
	release := holdSession(ctx, st, id, log)
	defer release()
	sv.cg = sv.openCgroup()
	log.Info("supervisor started", "pid", self.PID, "containment", sv.containment())
	ctx, gone := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		sv.watchDir(ctx, gone)
	}()
	err = sv.run(ctx)
	gone()
	<-watched
	sv.closeCgroup()
	if err != nil {
		log.Error("supervisor failed", "err", err)
	} else {
		log.Info("supervisor done")
	}
	return err
}

// run claims the session and runs turns until none is left. Each step from
// one turn to the next (or to the end) is a single update of the record, so
// nobody ever sees the session settled while a follow-up is about to start.
func (sv *supervisor) run(ctx context.Context) error {
	s, next, err := sv.begin(ctx)
	for err == nil && next != nil {
		end := sv.runTurn(ctx, s, next)
		if s.Workspace != nil {
			end.work = sv.commitTurn(s, end.N)
		}
		s, next, err = sv.afterTurn(ctx, end)
	}
	if err != nil {
		return fmt.Errorf("supervise %s: %w", sv.id, err)
	}
	return nil
}

// begin claims the session and starts its first turn of this supervisor:
// the task, or the follow-up that reopened it. A session whose worktree
// is not made yet (or was removed) has it made first, between the claim
// and the turn; meanwhile it is pending, and a kill stops the making.
func (sv *supervisor) begin(ctx context.Context) (*Session, *Turn, error) {
	var turn *Turn
	prepare := false
	s, err := sv.st.update(sv.id, func(s *Session) error {
		prepare = s.Workspace != nil && s.Stop == nil && needsMaking(s.Workspace)
		if err := s.claim(sv.self, prepare); err != nil {
			return err
		}
		if prepare {
			return nil
		}
		var err error
		turn, err = sv.next(ctx, s)
		return err
	})
	if err != nil || !prepare {
		return s, turn, err
	}
	made, perr := sv.prepare(ctx, s.Workspace)
	if perr != nil {
		// What the making started and left (a git or a setup command
		// cut short) is stopped before the failure is recorded.
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := sv.contain().sweep(sctx); err != nil {
			sv.log.Error("sweep after making the worktree", "err", err)
		}
		cancel()
	}
	s, err = sv.st.record(sv.id, func(s *Session) error {
		now := time.Now().UTC()
		if perr != nil {
			if ctx.Err() != nil {
				s.requestStop("stopped by a signal to its supervisor", now)
			}
			return s.prepareFailed(made, perr.Error(), now)
		}
		if err := s.prepared(made); err != nil {
			return err
		}
		var err error
		turn, err = sv.next(ctx, s)
		return err
	})
	return s, turn, err
}

// afterTurn records how a turn ended and, in the same update, starts the
// next queued follow-up or settles the session.
func (sv *supervisor) afterTurn(ctx context.Context, end turnEnd) (*Session, *Turn, error) {
	var turn *Turn
	s, err := sv.st.record(sv.id, func(s *Session) error {
		if err := s.endTurn(end, time.Now().UTC()); err != nil {
			return err
		}
		s.recordWork(end.N, end.work)
		s.refresh(sv.prices)
		var err error
		turn, err = sv.next(ctx, s)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("record turn %d: %w", end.N, err)
	}
	code := "none"
	if end.ExitCode != nil {
		code = fmt.Sprint(*end.ExitCode)
	}
	sv.log.Info("turn ended", "turn", end.N, "exit", code, "killed", end.Killed, "reason", end.Reason)
	return s, turn, nil
}

// next starts the next piece of work on s (held under the lock): the task
// first, then queued follow-ups in order. With nothing left, or a kill in
// progress, it settles the session and gives up ownership.
func (sv *supervisor) next(ctx context.Context, s *Session) (*Turn, error) {
	now := time.Now().UTC()
	if ctx.Err() != nil {
		s.requestStop("stopped by a signal to its supervisor", now)
	}
	if s.Stop == nil {
		ts, ok, err := sv.st.takeNext(s, now)
		if err != nil {
			return nil, err
		}
		if ok {
			if err := s.startTurn(ts, now); err != nil {
				return nil, err
			}
			s.refresh(sv.prices)
			t := *s.current()
			return &t, nil
		}
	}
	if s.Stop != nil {
		if err := sv.st.dropQueued(s, "the session was killed before it was delivered"); err != nil {
			return nil, err
		}
	}
	return nil, s.settle(now)
}

// takeNext finds what the next turn is: the task if no turn ran, else the
// oldest queued follow-up, which it marks delivered. Callers hold the lock.
func (st *Store) takeNext(s *Session, now time.Time) (turnStart, bool, error) {
	if len(s.Turns) == 0 {
		return turnStart{Prompt: s.Task}, true, nil
	}
	e, err := st.deliverNext(s, len(s.Turns)+1, now)
	if err != nil || e == nil {
		return turnStart{}, false, err
	}
	return turnStart{Prompt: e.Text, InboxID: e.ID, Resumed: s.ThreadID != ""}, true, nil
}

// Detach is the intermediate step of startSupervisor: it starts argv (the
// supervisor without --detach) in a new session with stdio detached from
// any terminal, stderr appended to the session's supervisor.log, writes the
// supervisor's ProcRef as JSON to out and returns.
func Detach(st *Store, id string, argv []string, out io.Writer) error {
	if err := validID(id); err != nil {
		return err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	logf, err := OpenAppend(st.dir, st.logPath(id))
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
	return writeJSONLine(out, ref)
}

// dirCheckEvery is how often the supervisor checks that its session is
// still recorded: well within a second of its directory's removal, the
// agent is stopped.
const dirCheckEvery = 200 * time.Millisecond

// watchDir stops the session (through stop, as SIGTERM does) once its
// directory is gone or replaced: nothing could record what the agent does
// any more, and no kill could find it. It returns when ctx ends.
func (sv *supervisor) watchDir(ctx context.Context, stop context.CancelFunc) {
	dir := sv.st.sessionDir(sv.id)
	first, err := os.Lstat(dir)
	if err != nil {
		sv.log.Warn("cannot watch the session's directory", "err", err)
		return
	}
	t := time.NewTicker(dirCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, err := os.Lstat(dir)
		if err == nil && os.SameFile(first, now) {
			continue
		}
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			sv.log.Error("the session's directory was removed while it ran; stopping its agent", "dir", dir)
			stop()
			return
		}
	}
}

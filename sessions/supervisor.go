package sessions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// flushEvery bounds how often a running turn's progress is written to
// meta.json: often enough for listings to be current, rarely enough that a
// chatty agent does not turn into a stream of file replacements.
const flushEvery = 250 * time.Millisecond

// supervisor runs the turns of one session, one after another, until no
// follow-up is queued. It is the only process that starts agents.
type supervisor struct {
	st       *Store
	adapters Adapters
	id       string
	self     ProcRef
	log      *slog.Logger
	prices   Prices
}

// Supervise is the body of `zwarm __supervise ID`: it owns the session until
// its last turn ends. SIGTERM or SIGINT stop it the way `zwarm kill` asks:
// the agent gets SIGTERM, a grace period, then SIGKILL, and every process of
// the session is gone before the kill is recorded.
func Supervise(ctx context.Context, st *Store, adapters Adapters, id string) error {
	if err := validID(id); err != nil {
		return err
	}
	logf, err := os.OpenFile(st.logPath(id), os.O_WRONLY|os.O_CREATE|os.O_APPEND, filePerm)
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
	sv := &supervisor{st: st, adapters: adapters, id: id, self: *self, log: log, prices: DefaultPrices()}
	if cfg, err := LoadConfig(st.Dir()); err == nil {
		sv.prices = cfg.PriceTable()
	}
	log.Info("supervisor started", "pid", self.PID)
	err = sv.run(ctx)
	if err != nil {
		log.Error("supervisor failed", "err", err)
	} else {
		log.Info("supervisor done")
	}
	return err
}

func (sv *supervisor) run(ctx context.Context) error {
	if _, err := sv.st.update(sv.id, func(s *Session) error {
		s.Owner = &sv.self
		return nil
	}); err != nil {
		return err
	}
	for {
		if ctx.Err() != nil {
			return sv.finish(StatusKilled, "killed before the next turn started")
		}
		s, turn, err := sv.nextTurn()
		if err != nil {
			return err
		}
		if turn == nil {
			return nil // finished; nextTurn recorded the final status
		}
		if err := sv.runTurn(ctx, s, turn); err != nil {
			if errors.Is(err, errKilled) {
				return nil
			}
			return err
		}
	}
}

// nextTurn claims the next piece of work under the session lock: the task
// first, then queued follow-ups in order. With nothing left it records the
// final status and gives up ownership in the same step, so an inject racing
// with the end either lands before (and is delivered) or after (and starts a
// new supervisor); never in between.
func (sv *supervisor) nextTurn() (*Session, *Turn, error) {
	var turn *Turn
	s, err := sv.st.update(sv.id, func(s *Session) error {
		now := time.Now().UTC()
		prompt, inboxID := "", ""
		if len(s.Turns) == 0 {
			prompt = s.Task
		} else {
			entries, err := sv.st.inbox(s.ID)
			if err != nil {
				return err
			}
			for i := range entries {
				if entries[i].State != InboxQueued {
					continue
				}
				e := &entries[i]
				e.State, e.Turn, e.DeliveredAt = InboxDelivered, len(s.Turns)+1, &now
				if err := sv.st.writeInbox(s.ID, e); err != nil {
					return err
				}
				prompt, inboxID = e.Text, e.ID
				break
			}
			if inboxID == "" {
				last := s.current()
				s.Status, s.Owner, s.Agent, s.PendingInjects = last.Status, nil, nil, 0
				if s.EndedAt == nil {
					s.EndedAt = last.EndedAt
				}
				return nil
			}
			s.PendingInjects = max(0, s.PendingInjects-1)
		}
		s.Turns = append(s.Turns, Turn{N: len(s.Turns) + 1, Prompt: prompt, InboxID: inboxID, StartedAt: now, Status: StatusRunning})
		s.Status, s.EndedAt, s.ExitCode, s.Error, s.Owner = StatusRunning, nil, nil, "", &sv.self
		s.refresh(sv.prices)
		turn = s.current()
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("supervise %s: %w", sv.id, err)
	}
	if turn == nil {
		return s, nil, nil
	}
	t := *turn
	return s, &t, nil
}

// finish records a final status when the supervisor stops between turns.
func (sv *supervisor) finish(status Status, msg string) error {
	_, err := sv.st.update(sv.id, func(s *Session) error {
		now := time.Now().UTC()
		s.Status, s.Owner, s.Agent, s.EndedAt = status, nil, nil, &now
		if msg != "" {
			s.Error = msg
		}
		return sv.st.dropQueued(s, "the session was "+string(status)+" before it was delivered")
	})
	return err
}

// exitCode turns a wait status into a shell-style exit code (128+signal).
func exitCode(ws unix.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// reap waits for every child of the supervisor: the agent, and as child
// subreaper also every orphaned descendant. It reports the agent's status
// and returns when no child is left, which the turn guarantees by sweeping.
func reap(agent int, exited chan<- unix.WaitStatus) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return // ECHILD: nothing left to wait for
		}
		if pid == agent {
			exited <- ws
		}
	}
}

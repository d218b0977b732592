package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/store"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// The supervisor's side of the lifecycle. A session's supervisor (package
// sessions/supervisor, run as `zwarm __supervise ID`) changes its session
// only through a Turns, which the store hands out for that one session.
// Each method that changes the record is one update under the session's
// lock, made of the transitions of lifecycle.go: a reader never sees a step
// in between, and no code outside this package can set a status.
//
//	Claim        claim, and start the first turn (unless a worktree is to be made first)
//	Prepared     prepared or prepareFailed, and start the first turn
//	EndTurn      endTurn, and start the next queued follow-up or settle
//	HandOver     handOver: a live agent's next turn
//	RecordProgress, SetAgent, NoteNewTurnFile   what a running turn shows
//
// EndTurn hands the session to a person instead of starting the next
// turn when its turn was interrupted for them (handToAttacher), and
// InterruptAsked tells the supervisor that its turn is to be interrupted.

var inSupervisor atomic.Bool

// InSupervisor reports whether this process is a session supervisor, in
// which nothing but the supervisor may start child processes.
func InSupervisor() bool { return inSupervisor.Load() }

// ActAsSupervisor marks this process as a session supervisor. A supervisor
// is a child subreaper that waits for every child it has (wait4(-1)): no
// other code may start processes in it, or the supervisor would take their
// exit statuses; InSupervisor lets such code refuse. The notes of the
// locks it holds name it "its supervisor".
func ActAsSupervisor() {
	inSupervisor.Store(true)
	store.NameHolder("its supervisor")
}

// Turns is a supervisor's hold on the one session it runs.
type Turns struct {
	// ID is the session's; Self the supervisor's process.
	ID   string
	Self proc.Ref
	// Files are the session's files, Cgroups its cgroup, as the
	// supervisor writes and contains them.
	Files   SessionFiles
	Cgroups Cgroups

	st     *Store
	prices record.Prices
	job    string // the job this supervisor runs as, under another runner
	// overCost is why the session must stop for its cost, once found.
	overCost atomic.Pointer[string]
	// asked is InterruptAsked's last answer, and the record it read.
	asked askedStamp
}

// askedStamp is an answer of InterruptAsked for turn n, given when the
// record was the file stamp names.
type askedStamp struct {
	stamp  fileStamp
	n      int
	answer bool
}

// fileStamp tells one version of a file from the next: each is renamed
// into place as a new file, so consecutive versions never share an inode.
type fileStamp struct {
	ino, size uint64
	mtime     int64
}

// Own hands session id to its supervisor, this process. It records
// nothing: Claim does.
func (st *Store) Own(id string) (*Turns, error) {
	if err := store.ValidID(id); err != nil {
		return nil, err
	}
	self, err := proc.RefOf(os.Getpid())
	if err != nil {
		return nil, err
	}
	self.Role, self.Token = record.RoleSupervisor, store.NewID()
	return &Turns{ID: id, Self: *self, Files: SessionFiles{st, id}, Cgroups: Cgroups{st, id}, st: st, prices: record.DefaultPrices()}, nil
}

// ErrFenced is a write by a supervisor that no longer owns its session:
// the record names another owner (a follow-up's supervisor, started after
// this one was judged gone: a cluster lost sight of its node, say), or
// none (it was settled without it). Nothing is written; the supervisor
// stops its agent and writes nothing more.
var ErrFenced = errors.New("the session has another owner now")

// owns fences a write of the supervisor's: it must still be the owner.
func owns(t *Turns, s *record.Session) error {
	if s.Owner == nil || s.Owner.Token != t.Self.Token {
		return fmt.Errorf("session %s: %w", store.ShortID(t.ID), ErrFenced)
	}
	return nil
}

// RunsAsJob says the supervisor runs as job id of the session's runner:
// Claim records it if the command that submitted the job has not yet (or
// never will: it was killed right after submitting), so the session's
// runner can judge it from the start.
func (t *Turns) RunsAsJob(id string) { t.job = id }

// UsePrices sets the prices the record's costs are computed with, from the
// config the supervisor read last.
func (t *Turns) UsePrices(p record.Prices) { t.prices = p }

// Claim makes the supervisor the session's owner and starts its first turn
// of this supervisor: the task, or the follow-up that reopened it. When the
// session's worktree must be made first (it never was, or was removed),
// prepare is true and no turn starts: the session stays pending, and a
// kill stops the making, until Prepared. next is nil when the session
// settled instead (a kill recorded before the start).
func (t *Turns) Claim(ctx context.Context) (s *record.Session, next *record.Turn, prepare bool, err error) {
	s, err = t.st.Update(t.ID, func(tx *Tx) error {
		s := tx.Session()
		if t.requeued(s) {
			// An interrupt asked while the job waited in the queue
			// (inject --interrupt, attach --interrupt) takes the
			// thread first, as it would have from a running turn.
			asked := s.Interrupt != nil
			if err := requeued(s, t.Self, time.Now().UTC(), !asked); err != nil {
				return err
			}
			if asked {
				var err error
				next, err = nextTurn(ctx, t, s)
				return err
			}
			s.Current().Job = t.job
			turn := *s.Current()
			next = &turn
			return nil
		}
		prepare = s.Workspace != nil && s.Stop == nil && needsMaking(s.Workspace)
		if err := claim(s, t.Self, prepare); err != nil {
			return err
		}
		if Remote(s) && s.Job.ID == "" && t.job != "" {
			s.Job.ID = t.job
		}
		if prepare {
			return nil
		}
		var err error
		next, err = nextTurn(ctx, t, s)
		return err
	})
	return s, next, prepare, err
}

// ClaimFailed claims the session and fails its start at once, for
// reason: what had to happen before its turn (the job's setup) did not.
func (t *Turns) ClaimFailed(ctx context.Context, reason string) (*record.Session, error) {
	return t.st.Update(t.ID, func(tx *Tx) error {
		s := tx.Session()
		if err := claim(s, t.Self, false); err != nil {
			return err
		}
		if Remote(s) && s.Job.ID == "" && t.job != "" {
			s.Job.ID = t.job
		}
		if err := t.st.DropQueued(s, reason); err != nil {
			return err
		}
		return failStart(s, reason, time.Now().UTC())
	})
}

// requeued says s's running turn is this supervisor's job's, in a run of
// it before this one: the cluster requeued the job (a preemption, a lost
// node) and started it again, under the same id, and the supervisor of
// that run left without a word (it was killed, or, signalled, left the
// outcome to the scheduler). A job id is one job's: no other supervisor
// runs as it.
func (t *Turns) requeued(s *record.Session) bool {
	return t.job != "" && s.Job != nil && s.Job.ID == t.job && s.TurnRunning() &&
		s.Owner != nil && s.Owner.Role == record.RoleSupervisor && s.Owner.Token != t.Self.Token && s.Stop == nil
}

// needsMaking reports whether a session's worktree must be made before
// its next turn: it never was, its making failed or was cut short, or it
// was removed (landed, or deleted by hand).
func needsMaking(ws *record.Workspace) bool {
	return ws.State != record.WorkspaceReady || !ws.Worktree().Exists()
}

// Made is what the supervisor made of a worktree: its git dir, what it
// brought along, and its commit once made.
type Made struct {
	Head, Admin, Own string
	Brought          []string
}

// Prepared records how making the session's worktree went (perr nil: it is
// ready) and, if it is ready, starts the first turn. A failed making fails
// the session, or kills it when ctx (the supervisor's) ended meanwhile.
func (t *Turns) Prepared(ctx context.Context, m Made, perr error) (*record.Session, *record.Turn, error) {
	var turn *record.Turn
	s, err := t.st.Record(t.ID, func(tx *Tx) error {
		s := tx.Session()
		if err := owns(t, s); err != nil {
			return err
		}
		now := time.Now().UTC()
		if perr != nil {
			if ctx.Err() != nil {
				requestStop(s, "stopped by a signal to its supervisor", now)
			}
			return prepareFailed(s, m, perr.Error(), now)
		}
		if err := prepared(s, m); err != nil {
			return err
		}
		var err error
		turn, err = nextTurn(ctx, t, s)
		return err
	})
	return s, turn, err
}

// EndTurn records how a turn ended and, in the same update, starts the
// next queued follow-up or settles the session: nobody ever sees it
// settled while a follow-up is about to start.
func (t *Turns) EndTurn(ctx context.Context, end TurnEnd) (*record.Session, *record.Turn, error) {
	var turn *record.Turn
	s, err := t.st.Record(t.ID, func(tx *Tx) error {
		s := tx.Session()
		if err := owns(t, s); err != nil {
			return err
		}
		if err := endTurn(s, end, time.Now().UTC()); err != nil {
			return err
		}
		RecordWork(s, end.N, end.Work)
		s.Refresh(t.prices)
		enforceCostLimit(t, s, time.Now().UTC())
		var err error
		turn, err = nextTurn(ctx, t, s)
		return err
	})
	return s, turn, err
}

// nextTurn starts the next piece of work on s (held under the lock): the task
// first, then queued follow-ups in order. With nothing left, or a kill in
// progress (ctx ended: a signal to the supervisor), it settles the session
// and gives up ownership.
func nextTurn(ctx context.Context, t *Turns, s *record.Session) (*record.Turn, error) {
	now := time.Now().UTC()
	if ctx.Err() != nil {
		requestStop(s, "stopped by a signal to its supervisor", now)
	}
	enforceCostLimit(t, s, now) // a follow-up to a session past its limit
	if r := s.Interrupt; r != nil && r.Attacher != nil && s.Stop == nil {
		// A person asked for the thread (attach --interrupt): it is
		// theirs now, and queued follow-ups wait until they leave.
		return nil, handToAttacher(s, now)
	}
	// An interrupt's follow-up goes first (takeNext); the interrupt itself
	// is done with once its turn has ended.
	s.Interrupt = nil
	if s.Stop == nil {
		ts, ok, err := t.st.takeNext(s, now)
		if err != nil {
			return nil, err
		}
		if ok {
			if err := startTurn(s, ts, now); err != nil {
				return nil, err
			}
			s.Current().Job = t.job
			s.Refresh(t.prices)
			turn := *s.Current()
			return &turn, nil
		}
	}
	if s.Stop != nil {
		if err := t.st.DropQueued(s, "the session was killed before it was delivered"); err != nil {
			return nil, err
		}
	}
	return nil, settle(s, now)
}

// takeNext finds what the next turn is: the task if no turn ran, else the
// oldest queued follow-up, which it marks delivered. Callers hold the lock.
func (st *Store) takeNext(s *record.Session, now time.Time) (turnStart, bool, error) {
	if len(s.Turns) == 0 {
		return turnStart{Prompt: s.Task}, true, nil
	}
	e, err := st.deliverNext(s, len(s.Turns)+1, now)
	if err != nil || e == nil {
		return turnStart{}, false, err
	}
	if s.ThreadID == "" {
		// No thread to continue: the agent begins again, knowing
		// nothing of the task unless it comes too (a follow-up sent with
		// --interrupt before the agent began its thread lost it).
		return turnStart{Prompt: WithTask(s.Task, e.Text), InboxID: e.ID}, true, nil
	}
	return turnStart{Prompt: e.Text, InboxID: e.ID, Resumed: true}, true, nil
}

// WithTask is a follow-up given to an agent that begins again, without
// the thread it would have continued: the task, then the follow-up.
func WithTask(task, followUp string) string {
	return task + "\n\nA follow-up from the user: " + followUp
}

// HandOver gives the next queued follow-up to the live agent, which just
// completed turn n, as turn n+1: it ends turn n and starts the next in one
// update. It returns nil when nothing is queued, a kill is in progress or
// ctx (the supervisor's) has ended.
func (t *Turns) HandOver(ctx context.Context, n int) (*record.Turn, error) {
	var next *record.Turn
	_, err := t.st.Update(t.ID, func(tx *Tx) error {
		s := tx.Session()
		if err := owns(t, s); err != nil {
			return err
		}
		if s.Stop != nil || ctx.Err() != nil || s.Interrupt != nil && s.Interrupt.Attacher != nil {
			return nil // a person takes over instead: the agent finishes
		}
		now := time.Now().UTC()
		e, err := t.st.deliverNext(s, n+1, now)
		if err != nil || e == nil {
			return err
		}
		if err := handOver(s, turnStart{Prompt: e.Text, InboxID: e.ID}, now); err != nil {
			return err
		}
		s.Refresh(t.prices)
		turn := *s.Current()
		next = &turn
		return nil
	})
	return next, err
}

// RecordProgress folds the events a running turn's agent printed into the
// record: the current turn's file is parsed up to offset, and last is when
// the latest event came (zero: none came). As an outcome (the last save of
// a turn) it may use the session's disk reserve, so that a turn's last
// words reach the record even on a full disk.
func (t *Turns) RecordProgress(evs []record.Event, offset int64, last time.Time, outcome bool) error {
	_, err := t.st.change(t.ID, func(tx *Tx) error {
		s := tx.Session()
		if err := owns(t, s); err != nil {
			return err
		}
		for _, ev := range evs {
			s.Fold(ev)
		}
		s.Current().Offset = offset
		if !last.IsZero() {
			s.LastEventAt = &last
		}
		s.Refresh(t.prices)
		enforceCostLimit(t, s, time.Now().UTC())
		return nil
	}, outcome)
	return err
}

// SetAgent records which process the agent is, and whether it takes
// follow-ups on its stdin.
func (t *Turns) SetAgent(agent *proc.Ref, live bool) error {
	_, err := t.st.Update(t.ID, func(tx *Tx) error {
		s := tx.Session()
		if err := owns(t, s); err != nil {
			return err
		}
		s.Agent, s.PID, s.AgentLive = agent, agent.PID, live
		return nil
	})
	return err
}

// RequestStop records that the session is to stop, with the reason, as a
// kill does: no turn starts from then on, and the turn it stops is killed
// with that reason.
func (t *Turns) RequestStop(reason string) error {
	_, err := t.st.Update(t.ID, func(tx *Tx) error {
		s := tx.Session()
		if err := owns(t, s); err != nil {
			return err
		}
		return requestStop(s, reason, time.Now().UTC())
	})
	return err
}

// InterruptAsked reports whether turn n, running, is to be interrupted
// (Session.Interrupt): the supervisor then stops its agent as a kill
// does, and reports the turn's end with TurnEnd.Interrupted.
//
// The supervisor asks often while the turn runs (the supervisor's
// interruptPoll), and on this host only a new version of the record is
// read: a stat tells. Under another runner (the Slurm runner: a job on
// another host, the same program) the record is on a shared file system
// whose attributes a host may cache for seconds, and which raises no
// inotify event for another host's writes: there the record is read each
// time, as every open shows the version last renamed into place (NFS's
// close-to-open consistency). So an interrupt needs no signal through the
// scheduler, which a supervisor in a job could not tell from a kill.
func (t *Turns) InterruptAsked(n int) (bool, error) {
	var stamp fileStamp
	if t.job == "" {
		var st unix.Stat_t
		if err := unix.Stat(t.st.MetaPath(t.ID), &st); err == nil {
			stamp = fileStamp{ino: st.Ino, size: uint64(st.Size), mtime: st.Mtim.Nano()}
			if a := t.asked; a.stamp == stamp && a.n == n {
				return a.answer, nil
			}
		}
	}
	s, err := t.st.Load(t.ID)
	if err != nil {
		return false, err
	}
	if err := owns(t, s); err != nil {
		return false, err
	}
	r := s.Interrupt
	answer := r != nil && r.Turn == n && s.Stop == nil
	if stamp != (fileStamp{}) {
		t.asked = askedStamp{stamp: stamp, n: n, answer: answer}
	}
	return answer, nil
}

// Current is the session's latest turn (a copy), nil before the first.
func (t *Turns) Current() (*record.Turn, error) {
	s, err := t.st.Load(t.ID)
	if err != nil || s.Current() == nil {
		return nil, err
	}
	turn := *s.Current()
	return &turn, nil
}

// NoteNewTurnFile records that turn n's file was removed while it ran and
// a new one holds the rest: note says so, and the offset starts again.
func (t *Turns) NoteNewTurnFile(n int, note string) error {
	_, err := t.st.Update(t.ID, func(tx *Tx) error {
		s := tx.Session()
		if err := owns(t, s); err != nil {
			return err
		}
		for i := range s.Turns {
			if s.Turns[i].N == n {
				s.Turns[i].Notes = append(s.Turns[i].Notes, note)
				s.Turns[i].Offset = 0
			}
		}
		return nil
	})
	return err
}

// TurnEnd is how an agent process ended a turn.
type TurnEnd struct {
	N        int  // the last turn the agent process served
	ExitCode *int // nil when no agent ran
	Killed   bool // zwarm stopped it
	// Interrupted says zwarm stopped it for Session.Interrupt: the turn is
	// recorded interrupted (unless a kill came too), not killed.
	Interrupted bool
	Reason      string // why zwarm failed the turn (could not start it, disk full); "" if it did not
	// Notes are added to the turn's notes (output a full disk kept out of
	// its file), whatever the turn's status.
	Notes []string
	// StderrTail is the end of the agent's stderr, the reason of last resort.
	StderrTail string
	Adapter    string
	// Work is what the agent changed in its worktree, committed by zwarm.
	Work *TurnWork
}

// TurnWork is what an agent process changed in its worktree over the
// turns it served, as zwarm committed it at the end.
type TurnWork struct {
	Commit  string // "" when nothing was committed during the turn
	From    string // the worktree's commit before the turn
	Files   []string
	Head    string
	Changes *workspace.Stat
	// Conflict is what is left of the files an update left conflicting,
	// checked again now that the worker had its turn.
	Conflict []string
	Err      string
	// Undone is what zwarm undid of the worker's doing before committing
	// (workspace.Worktree.Undone), for the log and the turn's record.
	Undone []string
}

// RecordWork puts what turn n changed in the record.
func RecordWork(s *record.Session, n int, w *TurnWork) {
	ws := s.Workspace
	if w == nil || ws == nil {
		return
	}
	if n >= 1 && n <= len(s.Turns) {
		// Said whether or not the turn's work was committed.
		tr := &s.Turns[n-1]
		tr.Undone, tr.UndoneOmitted = w.Undone, 0
		if len(tr.Undone) > record.MaxTurnUndone {
			tr.Undone, tr.UndoneOmitted = tr.Undone[:record.MaxTurnUndone], len(tr.Undone)-record.MaxTurnUndone
		}
	}
	if w.Err != "" {
		ws.Error = w.Err
		if len(w.Conflict) > 0 {
			ws.Conflict = w.Conflict
		}
		return
	}
	ws.Error, ws.Committed = "", n
	ws.Head, ws.Conflict = w.Head, w.Conflict
	if w.Changes != nil {
		ws.Changes = w.Changes
	}
	if n < 1 || n > len(s.Turns) {
		return
	}
	tr := &s.Turns[n-1]
	tr.Commit, tr.From = w.Commit, ""
	if w.Commit != "" {
		tr.From = w.From
	}
	tr.Files, tr.FilesOmitted = w.Files, 0
	if len(tr.Files) > record.MaxTurnFiles {
		tr.Files, tr.FilesOmitted = tr.Files[:record.MaxTurnFiles], len(tr.Files)-record.MaxTurnFiles
	}
}

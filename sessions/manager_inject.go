package sessions

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
	"github.com/zwarm/zwarm/sessions/telemetry"
)

// InjectOutcome is what became of a follow-up the moment it was sent.
type InjectOutcome string

const (
	// InjectQueued: a turn is running; the follow-up waits in the inbox and
	// becomes a later turn, in order. Live says the running agent takes it
	// on its stdin as its next turn; otherwise its thread is resumed.
	InjectQueued InjectOutcome = "queued"
	// InjectResumed: the session was settled; a new supervisor is resuming
	// the agent's thread with the follow-up as the next turn.
	InjectResumed InjectOutcome = "resumed"
	// InjectRestarted: the session was settled but its agent never reported
	// a thread to resume; the follow-up starts a new agent run.
	InjectRestarted InjectOutcome = "restarted"
	// InjectInterrupted: the running turn is being stopped (Interrupt);
	// the follow-up becomes the next turn, in the same thread, as soon as
	// it has.
	InjectInterrupted InjectOutcome = "interrupted"
)

// InjectResult says what Inject did, as decided under the session's lock.
type InjectResult struct {
	Entry   record.InboxEntry
	Outcome InjectOutcome
	// Turn is the turn the follow-up waits behind (queued), stops
	// (interrupted) or becomes (resumed, restarted): 2 for a session that
	// never ran a turn, whose task runs first.
	Turn int
	// Ahead is how many follow-ups go before this one.
	Ahead int
	// Live says a queued follow-up goes to the running agent process.
	Live bool
	// Attached says a person works in the session's CLI (zwarm attach):
	// the follow-up is queued until they leave it.
	Attached bool
	Session  *record.Session
}

// ErrStopping is returned (wrapped) by Inject while the session is being
// killed: the follow-up is not recorded.
var ErrStopping = errors.New("session is being killed")

// Inject sends a follow-up to a session. A running session queues it; the
// supervisor delivers queued follow-ups in order as the next turns. A
// settled session (completed, failed or killed) continues at once in the
// same agent thread, by the agent's native resume.
func (m *Manager) Inject(ctx context.Context, idOrPrefix, text string) (*InjectResult, error) {
	return m.InjectWith(ctx, idOrPrefix, text, InjectOptions{})
}

// InjectOptions are how a follow-up is sent (InjectWith).
type InjectOptions struct {
	// Interrupt stops the running turn for it (Interrupt).
	Interrupt bool
	// MaxCostUSD, above 0, is the session's new cost limit, set in the
	// same update that queues the follow-up: a worker stopped at its limit
	// continues its thread with a higher one. It must be above what the
	// session has spent.
	MaxCostUSD float64
}

// InjectWith sends a follow-up as Inject does, or as Interrupt does, with
// the options.
func (m *Manager) InjectWith(ctx context.Context, idOrPrefix, text string, opt InjectOptions) (*InjectResult, error) {
	return m.inject(ctx, idOrPrefix, text, opt)
}

// Interrupt sends a follow-up that takes over at once: the running turn is
// stopped (gracefully, as a kill stops it: the graceful signal, then force
// after kill_grace; the session goes on), recorded as interrupted, and the
// follow-up becomes the next turn of the same thread, before any queued
// earlier. A session that is not Interruptible takes it as Inject does,
// but still before the follow-ups queued without an interrupt.
func (m *Manager) Interrupt(ctx context.Context, idOrPrefix, text string) (*InjectResult, error) {
	return m.inject(ctx, idOrPrefix, text, InjectOptions{Interrupt: true})
}

func (m *Manager) inject(ctx context.Context, idOrPrefix, text string, opt InjectOptions) (*InjectResult, error) {
	if err := config.CheckText("message", text, "say what the agent should do next"); err != nil {
		return nil, err
	}
	if c := opt.MaxCostUSD; c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
		return nil, config.Invalidf("max cost %v: want a number of dollars above 0", c)
	}
	if err := m.trusted(); err != nil {
		return nil, err
	}
	id, err := listing.Resolve(m.st, idOrPrefix)
	if err != nil {
		return nil, err
	}
	// A Python zwarm session is read-only: refuse before taking its lock,
	// which would create a file in its directory.
	if s, err := m.st.Load(id); err == nil && s.Legacy {
		return nil, fmt.Errorf("inject %s: written by the Python zwarm; this zwarm only reads it", record.ShortID(id))
	}
	self, err := proc.RefOf(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("inject %s: %w", record.ShortID(id), err)
	}
	self.Role = record.RoleSpawn
	res := &InjectResult{Entry: record.InboxEntry{ID: store.NewID(), Text: text, CreatedAt: time.Now().UTC(), State: record.InboxQueued, Interrupt: opt.Interrupt,
		TraceParent: telemetry.Parent(ctx)}}
	// The follow-up is sent whole or not at all. Until the record is
	// changed, under the session's lock, an interrupt (ctx) or a lock held
	// past lock_timeout ends it with nothing changed; once it is, the rest
	// (starting the supervisor that delivers it) is done whatever ctx says,
	// so an interrupted follow-up is never left half sent.
	s, err := m.st.UpdateSettled(m.writing(ctx), id, func(tx *state.Tx) error {
		return m.queueFollowUp(ctx, tx, self, opt, res)
	})
	if err != nil {
		return nil, fmt.Errorf("inject %s: %w", record.ShortID(id), err)
	}
	res.Session = s
	// Only a session this command reopened needs a supervisor: a queued or
	// interrupting follow-up is delivered by the one running the session
	// (locally or in its job), which polls its record for the interrupt. A
	// second would wait for the first's lock and find the session not its
	// to claim.
	if res.Outcome == InjectResumed || res.Outcome == InjectRestarted {
		if err := m.startSupervisor(context.WithoutCancel(ctx), id); err != nil {
			return res, fmt.Errorf("inject %s: %w; %s", record.ShortID(id), err, m.fateOf(id, res.Entry.ID))
		}
	}
	return res, nil
}

// fateOf says what became of a follow-up whose supervisor could not be
// started, as its inbox entry says.
func (m *Manager) fateOf(id, entryID string) string {
	entries, err := m.st.Inbox(id)
	if err != nil {
		return fmt.Sprintf("what became of the follow-up is unknown: %v", err)
	}
	for _, e := range entries {
		if e.ID != entryID {
			continue
		}
		switch e.State {
		case record.InboxUndelivered:
			return "the follow-up was not delivered (recorded as undelivered): send it again once that is fixed"
		case record.InboxDelivered:
			return fmt.Sprintf("the follow-up was delivered all the same, as turn %d", e.Turn)
		}
		return "the follow-up is still queued: the next supervisor of the session delivers it"
	}
	return "the follow-up is not in the session's inbox"
}

// WaitInbox blocks until a follow-up has been answered: the turn it became
// has ended, or it was reported undelivered.
func (m *Manager) WaitInbox(ctx context.Context, id, entryID string) (*record.InboxEntry, *record.Session, error) {
	id, err := listing.Resolve(m.st, id)
	if err != nil {
		return nil, nil, err
	}
	var got *record.InboxEntry
	s, err := m.waitUntil(ctx, id, func(s *record.Session) (bool, error) {
		entries, err := m.st.Inbox(id)
		if err != nil {
			return false, err
		}
		for i := range entries {
			e := &entries[i]
			if e.ID != entryID {
				continue
			}
			got = e
			switch e.State {
			case record.InboxUndelivered:
				return true, nil
			case record.InboxDelivered:
				return e.Turn <= len(s.Turns) && s.Turns[e.Turn-1].EndedAt != nil, nil
			}
			return s.Settled(), nil
		}
		return false, fmt.Errorf("follow-up %s of session %s not found", entryID, record.ShortID(id))
	})
	return got, s, err
}

// readyForFollowUp refuses a follow-up (text) s cannot take now (it is
// being stopped, a landing works in its worktree, it is over its cost
// limit) or whose turn could never run (runnable),
// raises its cost limit when asked, records an owner that died unseen,
// and reserves space for a settled session about to run again. Callers
// hold its lock.
func (m *Manager) readyForFollowUp(ctx context.Context, tx *state.Tx, opt InjectOptions, text string) error {
	s := tx.Session()
	if s.Stopping() || state.KillFinishing(s, time.Now()) {
		at := time.Now()
		if s.Stop != nil {
			at = s.Stop.At
		}
		return fmt.Errorf("%w (since %s); send the follow-up once it has stopped", ErrStopping, at.Local().Format("15:04:05"))
	}
	if err := s.Busy(); err != nil {
		return err // a landing works in the worktree: a turn must not run there
	}
	if opt.MaxCostUSD > 0 {
		if err := state.RaiseCostLimit(s, opt.MaxCostUSD); err != nil {
			return err
		}
	}
	if why := state.OverCostLimit(s); why != "" {
		// Its supervisor would stop the follow-up before it started.
		return fmt.Errorf("%w: it is %s; send it with a higher --max-cost to continue its thread, or spawn a new worker", state.ErrOverCostLimit, why)
	}
	if alive, known := m.ownerAlive(ctx, s); !s.Settled() && !alive && known {
		// Its owner died unseen: record that first, then resume it.
		if err := m.abandonLocked(tx); err != nil {
			return err
		}
	}
	if err := m.runnable(s, opt.MaxCostUSD > 0, text); err != nil {
		return err
	}
	if s.Settled() {
		if err := state.WriteReserve(m.st.ReservePath(s.ID)); err != nil {
			return fmt.Errorf("cannot reserve space for the session: %w%s", err, state.NoSpaceHint(err))
		}
	}
	return nil
}

// runnable refuses a follow-up (text) whose turn could never run
// (state.CheckFollowUp).
func (m *Manager) runnable(s *record.Session, limitSet bool, text string) error {
	ad, err := m.adapters.Lookup(s.Adapter)
	if err != nil {
		return err
	}
	cfg, err := m.Config()
	if err != nil {
		return err
	}
	req := m.turnRequest(s, cfg)
	req.ReasoningEffort, req.Instructions, req.Prompt = s.ReasoningEffort, s.Instructions, text
	return state.CheckFollowUp(s, ad, cfg, req, limitSet)
}

// queueFollowUp queues res.Entry for s (held under its lock), delivered
// by its supervisor, as an interrupt of the running turn, or by a new
// supervisor for a settled session it reopens for self.
func (m *Manager) queueFollowUp(ctx context.Context, tx *state.Tx, self *proc.Ref, opt InjectOptions, res *InjectResult) error {
	s := tx.Session()
	if err := m.readyForFollowUp(ctx, tx, opt, res.Entry.Text); err != nil {
		return err
	}
	id := s.ID
	res.Entry.Seq = s.NextInboxSeq
	s.NextInboxSeq++
	res.Ahead = s.PendingInjects
	if opt.Interrupt && s.PendingInjects > 0 {
		ahead, err := m.st.InterruptsQueued(id)
		if err != nil {
			return err
		}
		res.Ahead = ahead
	}
	if err := m.st.WriteInbox(id, &res.Entry); err != nil {
		return err
	}
	s.PendingInjects++
	if !s.Settled() {
		res.Outcome, res.Turn, res.Live = InjectQueued, s.Turn, s.AgentLive
		res.Attached = s.Status() == record.StatusAttached
		if opt.Interrupt && s.Interruptible() {
			res.Outcome, res.Live = InjectInterrupted, false
			return tx.InterruptTurn(record.InterruptRequest{At: time.Now().UTC(), InboxID: res.Entry.ID})
		}
		return nil
	}
	res.Outcome, res.Turn = InjectResumed, len(s.Turns)+1
	if len(s.Turns) == 0 {
		res.Turn = 2 // the task first (its worktree or job failed before it ran)
	}
	if s.ThreadID == "" {
		res.Outcome = InjectRestarted
	}
	return tx.Reopen(*self)
}

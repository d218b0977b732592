package state

import (
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
)

// A Tx is one change of a session's record under its lock (Update and its
// kin): the record as read, to change, and the lifecycle's transitions,
// which apply to a record only here and, for its supervisor, through
// Turns. Each refuses a state it does not apply to (a *TransitionError)
// and leaves the record as it was.
type Tx struct{ s *record.Session }

// Session is the record being changed.
func (tx *Tx) Session() *record.Session { return tx.s }

// RequestStop marks the session stopping: its supervisor stops its agent,
// and the kill that asked records the end.
func (tx *Tx) RequestStop(reason string, now time.Time) error { return requestStop(tx.s, reason, now) }

// Stopped records the end of a kill.
func (tx *Tx) Stopped(note string, now time.Time) error { return stopped(tx.s, note, now) }

// Abandon settles a session whose owner died without recording its end.
func (tx *Tx) Abandon(msg string, now time.Time) error { return abandon(tx.s, msg, now) }

// FailStart fails a session whose supervisor could not be started.
func (tx *Tx) FailStart(reason string, now time.Time) error { return failStart(tx.s, reason, now) }

// Reopen makes a settled session pending again for owner, which starts its
// next turn (a follow-up).
func (tx *Tx) Reopen(owner proc.Ref) error { return reopen(tx.s, owner) }

// InterruptTurn marks the running turn to be stopped so that the thread
// goes on at once.
func (tx *Tx) InterruptTurn(r record.InterruptRequest) error { return interruptTurn(tx.s, r) }

// Attach hands a settled session to a person's CLI (owner).
func (tx *Tx) Attach(owner proc.Ref, now time.Time) error { return attach(tx.s, owner, now) }

// Detach settles an attached session again as it was, once the person's
// CLI exited (exit) or was found gone (note).
func (tx *Tx) Detach(exit *int, note string, now time.Time) error {
	return detach(tx.s, exit, note, now)
}

// WithdrawAttach takes back an interrupt for an attach that gave up.
func (tx *Tx) WithdrawAttach(token string) { withdrawAttach(tx.s, token) }

package sessions

import (
	"context"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// What this package's tests, which use it from outside (sessions_test),
// reach inside for: the processes the Manager finds of a session, its
// hooks, and steps of a kill, an attach and a landing taken alone.

// Containment is the processes of session id, as a kill finds them.
func (m *Manager) Containment(id string) proc.Scope { return m.containment(id) }

// SweepOut sweeps what is left of session id, as the last step of a kill.
func (m *Manager) SweepOut(ctx context.Context, id string) error { return m.sweepOut(ctx, id) }

// ClaimWorktree claims session id's worktree as a landing does.
func (m *Manager) ClaimWorktree(ctx context.Context, id, what string) (*record.Session, func(), error) {
	return m.claimWorktree(ctx, id, what)
}

// SetLockWaiting replaces the notice of a command waiting for a lock.
func (m *Manager) SetLockWaiting(f func(state.LockWait)) { m.lockWaiting = f }

// SetWarn replaces what the Manager does with a warning.
func (m *Manager) SetWarn(f func(error)) { m.warn = f }

// Current brings a record just read up to date, as Get does.
func (m *Manager) Current(s *record.Session) *record.Session { return m.current(s, nil) }

// StoppedUnrecorded is the error of a kill that stopped a session it
// could not record.
var StoppedUnrecorded = stoppedUnrecorded

// RecordAttachUsage charges a person's attached span its usage.
func RecordAttachUsage(s *record.Session, u record.Usage, cumulative bool) bool {
	return state.RecordAttachUsage(s, u, cumulative)
}

// ManagerOn is a Manager of st with no adapters or runners: enough to
// read records.
func ManagerOn(st *state.Store) *Manager { return NewManager(ManagerOptions{Store: st}) }

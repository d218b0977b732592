package sessionstest

import (
	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/record"
)

// A record's status is changed only by the lifecycle (sessions/state);
// no other package can write one. A test that makes a record to read, as
// zwarm would have written it, sets its status with these.

// WithStatus is v, a record.Session or a record.Turn, with status to:
//
//	s := sessionstest.WithStatus(record.Session{ID: "a1"}, record.StatusRunning)
func WithStatus[T any, P interface {
	*T
	statusfield.Holder
}](v T, to record.Status) T {
	return statusfield.With[T, P](v, to)
}

// SetStatus sets the status of s, a *record.Session or a *record.Turn.
func SetStatus(s statusfield.Holder, to record.Status) { statusfield.Set(s, to) }

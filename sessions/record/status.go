package record

import (
	"fmt"

	"github.com/zwarm/zwarm/sessions/internal/statusfield"
)

// Status is where a session is in its lifecycle:
//
//	pending ─► running ─► completed | failed | killed
//	settled ─► attached ─► settled (as it was)
//
// A finished session goes back to running when a follow-up turn starts,
// and is attached while a person works in its agent's own CLI (zwarm
// attach).
//
// A record's status is read with its Status method and changed only by
// the lifecycle (sessions/state): see sessions/internal/statusfield.
type Status = statusfield.Status

// statusField is a record's status, embedded under this unexported name
// so that no package but the lifecycle's can write it.
type statusField = statusfield.Field

const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusAttached  Status = "attached"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusKilled    Status = "killed"
)

// StatusInterrupted is a turn's status, never a session's: zwarm stopped
// the turn so that a follow-up (inject --interrupt) could take over the
// thread at once, or a person (attach --interrupt).
const StatusInterrupted Status = "interrupted"

// Statuses lists every status of a session in lifecycle order.
var Statuses = []Status{StatusPending, StatusRunning, StatusAttached, StatusCompleted, StatusFailed, StatusKilled}

// ParseStatus validates a status name given by a user.
func ParseStatus(s string) (Status, error) {
	for _, st := range Statuses {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("unknown status %q (want one of pending, running, attached, completed, failed, killed)", s)
}

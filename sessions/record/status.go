package record

import "fmt"

// Status is where a session is in its lifecycle:
//
//	pending ─► running ─► completed | failed | killed
//	settled ─► attached ─► settled (as it was)
//
// A finished session goes back to running when a follow-up turn starts,
// and is attached while a person works in its agent's own CLI (zwarm
// attach).
type Status string

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

// Finished reports whether no turn is running or about to run, and nobody
// works in the session's thread.
func (s Status) Finished() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusKilled
}

// Ended says how a settled session ended, as the end of a sentence about
// it: "completed", "failed", "was killed".
func (s Status) Ended() string {
	if s == StatusKilled {
		return "was killed"
	}
	return string(s)
}

// ParseStatus validates a status name given by a user.
func ParseStatus(s string) (Status, error) {
	for _, st := range Statuses {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("unknown status %q (want one of pending, running, attached, completed, failed, killed)", s)
}

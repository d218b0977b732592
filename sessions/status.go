package sessions

import "fmt"

// Status is where a session is in its lifecycle:
//
//	pending ─► running ─► completed | failed | killed
//
// A finished session goes back to running when a follow-up turn starts.
type Status string

const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusKilled    Status = "killed"
)

// Statuses lists every status in lifecycle order.
var Statuses = []Status{StatusPending, StatusRunning, StatusCompleted, StatusFailed, StatusKilled}

// Finished reports whether no turn is running or about to run.
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
	return "", fmt.Errorf("unknown status %q (want one of pending, running, completed, failed, killed)", s)
}

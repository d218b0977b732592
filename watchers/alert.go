package watchers

import (
	"github.com/zwarm/zwarm/sessions/record"
	"time"
)

// Alert is a worker watcher's finding about one session. In JSON (zwarm
// watch --json) it has exactly these fields.
type Alert struct {
	Watcher   string `json:"watcher"`
	SessionID string `json:"session_id"`
	// Action is Nudge (whoever drives the worker should look: a person,
	// or a run's model) or Stop (the watcher stopped the worker).
	Action Action    `json:"action"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	// Status, Task and Source are the session's when the alert was made.
	Status record.Status `json:"status"`
	Task   string        `json:"task"`
	Source record.Source `json:"source"`
	// Error is set when stopping the worker failed.
	Error string `json:"error,omitempty"`
}

func alertFor(s *record.Session, watcher string, action Action, reason string, now time.Time) Alert {
	return Alert{Watcher: watcher, SessionID: s.ID, Action: action, Reason: reason, At: now.UTC(),
		Status: s.Status(), Task: s.Task, Source: s.Source}
}

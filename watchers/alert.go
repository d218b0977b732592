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
	Action Action `json:"action"`
	// Reason is as its sources wrote it (an agent's error, a reviewer's
	// words): whoever prints it to a terminal makes it safe, and JSON
	// has it byte for byte.
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	// Status, Task and Source are the session's when the alert was made.
	Status record.Status `json:"status"`
	Task   string        `json:"task"`
	Source record.Source `json:"source"`
	// Error is set when stopping the worker failed.
	Error string `json:"error,omitempty"`
}

// cut is s cut to at most n runes, as it is.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func alertFor(s *record.Session, watcher string, action Action, reason string, now time.Time) Alert {
	return Alert{Watcher: watcher, SessionID: s.ID, Action: action, Reason: reason, At: now.UTC(),
		Status: s.Status(), Task: s.Task, Source: s.Source}
}

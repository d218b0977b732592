package notify

import (
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
	"github.com/zwarm/zwarm/watchers"
)

// Workers turns what the worker watchers see into events: a turn that
// completed, a session that failed or was killed (from the subscription's
// updates) and a stall (from the stall watcher's alerts). It is a
// watchers.WorkerNotifier. What was already so when the subscription
// started is not told: only what happens while it runs.
type Workers struct {
	n        *Notifier
	sessions string // the state dir's sessions/

	mu   sync.Mutex
	seen map[string]*record.Session // the latest record of each unsettled session
}

// Workers is the notifier's side for the sessions of stateDir.
func (n *Notifier) Workers(stateDir string) *Workers {
	return &Workers{n: n, sessions: filepath.Join(stateDir, "sessions"), seen: map[string]*record.Session{}}
}

// Update takes one update of the watchers' subscription.
func (w *Workers) Update(u watch.Update) {
	if w == nil || u.Session == nil {
		return
	}
	s := u.Session
	w.mu.Lock()
	if s.Settled() {
		delete(w.seen, u.ID) // a settled session does not stall
	} else {
		w.seen[u.ID] = s
	}
	w.mu.Unlock()
	if u.Initial || !u.StatusChanged() {
		return
	}
	w.Settled(s)
}

// Settled tells how s settled, if it completed, failed or was killed:
// zwarm wait calls it for the sessions it waited for.
func (w *Workers) Settled(s *record.Session) {
	if w == nil || s == nil {
		return
	}
	ev := Event{ID: s.ID, Status: string(s.Status()), Dir: filepath.Join(w.sessions, s.ID), Key: fmt.Sprintf("turn-%d", len(s.Turns))}
	switch s.Status() {
	case record.StatusCompleted:
		ev.Name, ev.Text = WorkerCompleted, "completed: "+clip(s.Task)
		if s.LastMessage != "" {
			ev.Text += " · " + clip(s.LastMessage)
		}
	case record.StatusFailed, record.StatusKilled:
		ev.Name, ev.Text = WorkerFailed, string(s.Status())+": "+clip(s.Task)
		if s.Error != "" {
			ev.Text += " · " + clip(s.Error)
		}
	default:
		return
	}
	w.n.Notify(ev)
}

// Alert takes one alert of the worker watchers; only stalls are told.
func (w *Workers) Alert(a watchers.Alert) {
	if w == nil || a.Watcher != "stall" {
		return
	}
	w.mu.Lock()
	s := w.seen[a.SessionID]
	w.mu.Unlock()
	// A stall is one silence: every process that sees it names it by the
	// turn and the last event before it, as the record says.
	key := "silence"
	if s != nil {
		since := time.Time{}
		if s.LastEventAt != nil {
			since = *s.LastEventAt
		} else if len(s.Turns) > 0 {
			since = s.Turns[len(s.Turns)-1].StartedAt
		}
		key = fmt.Sprintf("turn-%d.since-%d", len(s.Turns), since.UnixNano())
	}
	w.n.Notify(Event{Name: WorkerStalled, ID: a.SessionID, Status: string(a.Status), Text: "stalled: " + clip(a.Reason) + " · " + clip(a.Task),
		Dir: filepath.Join(w.sessions, a.SessionID), Key: key})
}

// clip shortens text for a notification.
func clip(s string) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > 120 {
		return string(r[:119]) + "…"
	}
	return s
}

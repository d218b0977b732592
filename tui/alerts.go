package tui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/watchers"
)

// The worker watchers run beside the dashboard (Run starts them on the
// state dir's active sessions); their alerts arrive as messages. The
// latest one is said in the status line, and the session's row is marked
// until the session shows it has moved on.

// alertMsg is one alert of the worker watchers; closed says they stopped.
type alertMsg struct {
	alert  watchers.Alert
	closed bool
}

// nextAlert waits for the watchers' next alert.
func nextAlert(ch <-chan watchers.Alert) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		a, ok := <-ch
		return alertMsg{alert: a, closed: !ok}
	}
}

func (m *Model) onAlert(msg alertMsg) tea.Cmd {
	if msg.closed {
		return nil
	}
	a := msg.alert
	if a.Watcher == "failure" && a.Status == record.StatusKilled && m.killedHere[a.SessionID] {
		return nextAlert(m.opt.Alerts) // the person's own kill, which the status line said
	}
	if m.alerts == nil {
		m.alerts = map[string]watchers.Alert{}
	}
	m.alerts[a.SessionID] = a
	m.list.SetAlert(a.SessionID, a.Watcher)
	what := "⚠ " + a.Watcher
	if a.Action == watchers.Stop {
		what = "■ " + a.Watcher + " stopped"
	}
	m.setStatus(fmt.Sprintf("%s %s: %s", what, record.ShortID(a.SessionID), a.Reason))
	return nextAlert(m.opt.Alerts)
}

// clearAlerts drops the marks of sessions that moved on since their alert:
// a new event after a stall, a follow-up after a failure, the landing (or
// removal) of the work that overlapped another worker's (which more
// events do not mend).
func (m *Model) clearAlerts(list []*record.Session) {
	for _, s := range list {
		a, ok := m.alerts[s.ID]
		if !ok {
			continue
		}
		active := s.LastEventAt != nil && s.LastEventAt.After(a.At)
		reopened := a.Status.Finished() && !s.Settled()
		if a.Watcher == "overlap" {
			active, reopened = !s.ChangeToLand(), false
		}
		if active || reopened {
			delete(m.alerts, s.ID)
			m.list.SetAlert(s.ID, "")
		}
	}
}

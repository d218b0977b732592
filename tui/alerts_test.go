package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/store"
	"github.com/zwarm/zwarm/watchers"
)

// A watcher's alert is said in the status line and marks the session's
// row, without colour too; the mark goes once the session shows activity
// after it.
func TestWatcherAlertsShowAndClear(t *testing.T) {
	f := newFixture(t)
	id := f.add(1, record.StatusRunning, "quiet worker", time.Hour)
	alerts := make(chan watchers.Alert, 1)
	m := f.startWith(f.m, alerts, 120, 40)
	at := time.Now().UTC()
	alerts <- watchers.Alert{Watcher: "stall", SessionID: id, Action: watchers.Nudge,
		Reason: "no event for 12m", At: at, Status: record.StatusRunning}
	m = settle(t, m, func(m Model) bool { return strings.Contains(m.View(), "⚠ stall 3f2a0001: no event for 12m") })
	row := rowOf(m.View(), "quiet worker")
	if !strings.Contains(row, "⚠") {
		t.Fatalf("the row is not marked: %q", row)
	}
	later := at.Add(time.Second)
	f.rewrite(id, func(s *record.Session) { s.LastEventAt = &later })
	m = settle(t, m, func(m Model) bool { return !strings.Contains(rowOf(m.View(), "quiet worker"), "⚠") })
}

func rowOf(view, text string) string {
	for _, l := range strings.Split(view, "\n") {
		if strings.Contains(l, text) {
			return l
		}
	}
	return ""
}

// An overlap mark stays while the worker goes on working (its events do
// not mend the overlap) and after it settles with its change not landed,
// and goes when its change lands.
func TestOverlapMarkStaysUntilTheWorkersChangeLands(t *testing.T) {
	f := newFixture(t)
	id := f.add(1, record.StatusRunning, "busy", 0)
	f.rewrite(id, func(s *record.Session) {
		s.Workspace = &record.Workspace{Repo: "/src/api", Path: "/wt/api/" + s.ID, Branch: "zwarm/" + s.ID, State: record.WorkspaceReady, Head: "c0ffee"}
	})
	alerts := make(chan watchers.Alert, 1)
	m := f.startWith(f.m, alerts, 120, 40)
	at := time.Now().UTC()
	alerts <- watchers.Alert{Watcher: "overlap", SessionID: id, Action: watchers.Nudge,
		Reason: "3f2a0001 and 9c1d4e2f both change api/server.go", At: at, Status: record.StatusRunning}
	m = settle(t, m, func(m Model) bool { return strings.Contains(m.View(), "⚠ overlap 3f2a0001") })
	later := at.Add(time.Second)
	// The list shows the new record (its model changed with the event)
	// with the mark still on.
	f.rewrite(id, func(s *record.Session) { s.LastEventAt, s.Model = &later, "gpt-5.5-next" })
	m = settle(t, m, func(m Model) bool { return strings.Contains(rowOf(m.View(), "busy"), "gpt-5.5-next") })
	if row := rowOf(m.View(), "busy"); !strings.Contains(row, "⚠") {
		t.Fatalf("an event cleared the overlap mark: %q", row)
	}
	f.rewrite(id, func(s *record.Session) {
		sessionstest.SetStatus(s, record.StatusCompleted)
		s.Owner, s.Model = nil, "gpt-5.5-done"
	})
	m = settle(t, m, func(m Model) bool { return strings.Contains(rowOf(m.View(), "busy"), "gpt-5.5-done") })
	if row := rowOf(m.View(), "busy"); !strings.Contains(row, "⚠") {
		t.Fatalf("settling with its change not landed cleared the overlap mark: %q", row)
	}
	// A landing rewrites a settled record, which readers learn of from
	// sessions.gen, as zwarm land does it.
	if err := store.BumpGeneration(context.Background(), f.dir, filepath.Join(f.dir, "sessions.gen"), "the session list", func() error {
		f.rewrite(id, func(s *record.Session) { s.Workspace.Landed = &record.Landing{Head: "c0ffee", Into: "main"} })
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	settle(t, m, func(m Model) bool { return !strings.Contains(rowOf(m.View(), "busy"), "⚠") })
}

// A kill the person made from this dashboard is no news to them: the
// failure watcher's alert of it marks no row. Another session's is.
func TestTheFailureAlertOfAKillMadeHereIsNotShown(t *testing.T) {
	f := newFixture(t)
	mine := f.add(1, record.StatusKilled, "killed here", time.Minute)
	other := f.add(2, record.StatusKilled, "killed elsewhere", time.Minute)
	alerts := make(chan watchers.Alert, 2)
	m := f.startWith(f.m, alerts, 120, 40)
	m.killedHere = map[string]bool{mine: true}
	at := time.Now().UTC()
	alerts <- watchers.Alert{Watcher: "failure", SessionID: mine, Action: watchers.Nudge, Reason: "killed: killed by zwarm kill", At: at, Status: record.StatusKilled}
	alerts <- watchers.Alert{Watcher: "failure", SessionID: other, Action: watchers.Nudge, Reason: "killed: by slurm", At: at, Status: record.StatusKilled}
	m = settle(t, m, func(m Model) bool { return strings.Contains(rowOf(m.View(), "killed elsewhere"), "⚠") })
	if row := rowOf(m.View(), "killed here"); strings.Contains(row, "⚠") {
		t.Fatalf("the person's own kill is marked: %q", row)
	}
}

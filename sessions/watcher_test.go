package sessions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/sessions"
)

// writeSession writes a finished session record with one turn, as a
// supervisor would have left it.
func writeSession(t testing.TB, dir, id string, turn string) {
	t.Helper()
	now := time.Now().UTC()
	code := 0
	s := sessions.Session{Version: sessions.SchemaVersion, ID: id, Task: "t", Status: sessions.StatusCompleted, Adapter: "codex",
		CreatedAt: now, EndedAt: &now, ExitCode: &code,
		Turns: []sessions.Turn{{N: 1, Prompt: "t", StartedAt: now, EndedAt: &now, Status: sessions.StatusCompleted}}}
	sdir := filepath.Join(dir, "sessions", id)
	os.MkdirAll(filepath.Join(sdir, "turns"), 0o700)
	data, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(sdir, "meta.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sdir, "turns", "turn_1.jsonl"), []byte(turn), 0o600); err != nil {
		t.Fatal(err)
	}
}

func manager(t testing.TB, dir string) *sessions.Manager {
	st, err := sessions.NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sessions.NewManager(st, adapters.Builtin(), nil)
}

func next(t *testing.T, w *sessions.Watcher, want func(sessions.Change) bool) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case batch, ok := <-w.Changes():
			if !ok {
				t.Fatal("watcher closed")
			}
			for _, c := range batch {
				if want(c) {
					return
				}
			}
		case <-timeout:
			t.Fatal("no matching change")
		}
	}
}

func TestWatcherReportsNewSessionsAppendsAndRemovals(t *testing.T) {
	dir := t.TempDir()
	m := manager(t, dir)
	w, err := m.Watch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	id := "3f2a0000-0000-4000-8000-000000000001"
	writeSession(t, dir, id, "")
	next(t, w, func(c sessions.Change) bool { return c.ID == id && c.Meta })
	f, _ := os.OpenFile(filepath.Join(dir, "sessions", id, "turns", "turn_1.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"turn.started"}` + "\n")
	f.Close()
	next(t, w, func(c sessions.Change) bool { return c.ID == id && c.Turns })
	os.RemoveAll(filepath.Join(dir, "sessions", id))
	next(t, w, func(c sessions.Change) bool { return c.ID == id && c.Removed })
}

func TestTrajectoryReadsIncrementallyAndBoundsHugeTurns(t *testing.T) {
	dir := t.TempDir()
	id := "3f2a0000-0000-4000-8000-000000000002"
	var b strings.Builder
	b.WriteString(`{"type":"thread.started","thread_id":"x"}` + "\n")
	for range 2000 {
		b.WriteString(`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"` + strings.Repeat("y", 100) + `"}}` + "\n")
	}
	writeSession(t, dir, id, b.String())
	m := manager(t, dir)

	whole := m.NewTrajectory(id, sessions.TrajectoryOptions{})
	_, batches, err := whole.Read(context.Background())
	if err != nil || len(batches) != 1 || len(batches[0].Events) != 2001 || batches[0].Skipped != 0 || !batches[0].First {
		t.Fatalf("whole: %v %+v", err, batches)
	}
	if _, again, _ := whole.Read(context.Background()); len(again) != 0 {
		t.Fatalf("an ended turn was read twice: %+v", again)
	}

	tail := m.NewTrajectory(id, sessions.TrajectoryOptions{Window: 10_000})
	_, batches, err = tail.Read(context.Background())
	if err != nil || len(batches) != 1 {
		t.Fatal(err)
	}
	tb := batches[0]
	if tb.Skipped == 0 || len(tb.Events) == 0 || len(tb.Events) > 100 {
		t.Fatalf("window: skipped %d, %d events", tb.Skipped, len(tb.Events))
	}
	for _, ev := range tb.Events {
		if ev.Type != sessions.EventMessage {
			t.Fatalf("window did not start at a line boundary: %+v", ev)
		}
	}
}

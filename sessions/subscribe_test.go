package sessions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/watch"
)

// writeSession writes a finished session record with one turn, as a
// supervisor would have left it.
func writeSession(t testing.TB, dir, id string, turn string) {
	t.Helper()
	now := time.Now().UTC()
	code := 0
	s := statusfield.With(record.Session{Version: record.SchemaVersion, ID: id, Task: "t", Adapter: "codex",
		CreatedAt: now, EndedAt: &now, ExitCode: &code,
		Turns: []record.Turn{statusfield.With(record.Turn{N: 1, Prompt: "t", StartedAt: now, EndedAt: &now}, record.StatusCompleted)}}, record.StatusCompleted)
	sdir := filepath.Join(dir, "sessions", id)
	os.MkdirAll(filepath.Join(sdir, "turns"), 0o700)
	if err := os.WriteFile(filepath.Join(sdir, "turns", "turn_1.jsonl"), []byte(turn), 0o600); err != nil {
		t.Fatal(err)
	}
	// Written as the store writes it: whole, by rename.
	data, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(sdir, ".meta.json.tmp"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(sdir, ".meta.json.tmp"), filepath.Join(sdir, "meta.json")); err != nil {
		t.Fatal(err)
	}
}

func manager(t testing.TB, dir string) *sessions.Manager {
	st, err := state.NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin()})
}

// nextUpdate waits for an update that want accepts: what, it says.
func nextUpdate(t *testing.T, sub *watch.Subscription, what string, want func(watch.Update) bool) watch.Update {
	t.Helper()
	timeout := time.After(time.Minute)
	var seen []string
	for {
		select {
		case u, ok := <-sub.C():
			if !ok {
				t.Fatalf("waiting for %s: the subscription closed (%v) after updates %q", what, sub.Err(), seen)
			}
			if want(u) {
				return u
			}
			seen = append(seen, fmt.Sprintf("%s initial=%v removed=%v session=%v", u.ID, u.Initial, u.Removed, u.Session != nil))
		case <-timeout:
			t.Fatalf("no update with %s within a minute; saw %q", what, seen)
		}
	}
}

func TestSubscriptionReportsNewSessionsEventsAndRemovals(t *testing.T) {
	dir := t.TempDir()
	m := manager(t, dir)
	sub, err := m.Subscribe(context.Background(), watch.SubscribeOptions{Events: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	id := "3f2a0000-0000-4000-8000-000000000001"
	writeSession(t, dir, id, "")
	u := nextUpdate(t, sub, "the new session", func(u watch.Update) bool { return u.ID == id })
	if !u.Initial || u.Session == nil || u.Session.Status() != record.StatusCompleted || len(u.Ended) != 1 {
		t.Fatalf("first update of a new session: %+v", u)
	}
	f, _ := os.OpenFile(filepath.Join(dir, "sessions", id, "turns", "turn_1.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"late"}}` + "\n")
	f.Close()
	// The turn has ended, so its file was read to the end already; touching
	// the record makes the subscription look again.
	os.Chtimes(filepath.Join(dir, "sessions", id, "meta.json"), time.Now(), time.Now())
	os.RemoveAll(filepath.Join(dir, "sessions", id))
	u = nextUpdate(t, sub, "the session's removal", func(u watch.Update) bool { return u.ID == id && u.Removed })
	if u.Session != nil || u.Prev != record.StatusCompleted {
		t.Fatalf("removal: %+v", u)
	}
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

	whole := m.NewTrajectory(id, watch.TrajectoryOptions{})
	_, batches, err := whole.Read(context.Background())
	if err != nil || len(batches) != 1 || len(batches[0].Events) != 2001 || batches[0].Skipped != 0 || !batches[0].First {
		t.Fatalf("whole: %v %+v", err, batches)
	}
	if _, again, _ := whole.Read(context.Background()); len(again) != 0 {
		t.Fatalf("an ended turn was read twice: %+v", again)
	}

	tail := m.NewTrajectory(id, watch.TrajectoryOptions{Window: 10_000})
	_, batches, err = tail.Read(context.Background())
	if err != nil || len(batches) != 1 {
		t.Fatal(err)
	}
	tb := batches[0]
	if tb.Skipped == 0 || len(tb.Events) == 0 || len(tb.Events) > 100 {
		t.Fatalf("window: skipped %d, %d events", tb.Skipped, len(tb.Events))
	}
	for _, ev := range tb.Events {
		if ev.Type != record.EventMessage {
			t.Fatalf("window did not start at a line boundary: %+v", ev)
		}
	}
}

// A state dir removed while a subscription watches it, then made again:
// its sessions are reported gone, and the new ones seen (the
// subscription kept watching the directory that was removed, and saw
// nothing more for good: zwarm serve's page stopped updating).
func TestSubscriptionOutlivesItsStateDirMadeAgain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	m := manager(t, dir)
	old, again := "3f2a0000-0000-4000-8000-000000000011", "3f2a0000-0000-4000-8000-000000000012"
	writeSession(t, dir, old, "")
	sub, err := m.Subscribe(context.Background(), watch.SubscribeOptions{Listing: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	nextUpdate(t, sub, "the first state", func(u watch.Update) bool { return u.Synced })
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	nextUpdate(t, sub, "the old session gone", func(u watch.Update) bool { return u.ID == old && u.Removed })
	writeSession(t, dir, again, "")
	nextUpdate(t, sub, "the session of the state dir made again", func(u watch.Update) bool { return u.ID == again && u.Session != nil })
}

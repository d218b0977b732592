package sessions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
)

// A reader with a window that falls behind a running turn reads only the
// last window of what the turn grew by, and says how much it skipped: a
// dashboard catches up with an agent printing gigabytes in one window's
// work.
func TestTrajectorySkipsWhatARunningTurnGrewBeyondTheWindow(t *testing.T) {
	dir := t.TempDir()
	id := "3f2a0000-0000-4000-8000-000000000003"
	now := time.Now().UTC()
	s := statusfield.With(record.Session{Version: record.SchemaVersion, ID: id, Task: "t", Adapter: "codex",
		CreatedAt: now, Turns: []record.Turn{statusfield.With(record.Turn{N: 1, Prompt: "t", StartedAt: now}, record.StatusRunning)}}, record.StatusRunning)
	// Its supervisor is this process, alive.
	self, err := proc.RefOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	self.Role = "supervisor"
	s.Owner = self
	sdir := filepath.Join(dir, "sessions", id)
	os.MkdirAll(filepath.Join(sdir, "turns"), 0o700)
	data, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(sdir, "meta.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	turn := filepath.Join(sdir, "turns", "turn_1.jsonl")
	msg := func(text string) string {
		return `{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"` + text + `"}}` + "\n"
	}
	os.WriteFile(turn, []byte(`{"type":"thread.started","thread_id":"x"}`+"\n"), 0o600)
	tr := manager(t, dir).NewTrajectory(id, watch.TrajectoryOptions{Window: 10_000})
	defer tr.Close()
	if _, batches, err := tr.Read(context.Background()); err != nil || len(batches) != 1 || len(batches[0].Events) != 1 {
		t.Fatalf("first read: %v %+v", err, batches)
	}

	f, _ := os.OpenFile(turn, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(msg("a few"))
	_, batches, err := tr.Read(context.Background())
	if err != nil || len(batches) != 1 || batches[0].Skipped != 0 || len(batches[0].Events) != 1 {
		t.Fatalf("a small growth: %v %+v", err, batches)
	}

	f.WriteString(strings.Repeat(msg(strings.Repeat("y", 100)), 2000) + msg("the last"))
	f.Close()
	_, batches, err = tr.Read(context.Background())
	if err != nil || len(batches) != 1 {
		t.Fatalf("a big growth: %v %+v", err, batches)
	}
	b := batches[0]
	evs := b.Events
	if b.First || b.Skipped < 200_000 || len(evs) == 0 || len(evs) > 100 || evs[len(evs)-1].Text != "the last" {
		t.Fatalf("a big growth: skipped %d, %d events", b.Skipped, len(evs))
	}
	u := watch.Update{ID: id, Events: batches}
	if st := u.Timeline(); st[0].Kind != watch.StepSkipped || st[0].Skipped != b.Skipped {
		t.Fatalf("timeline starts with %+v", st[0])
	}
}

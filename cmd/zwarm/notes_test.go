package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// A turn file removed while its turn runs: show and logs say so, under
// the turn, with the note the supervisor recorded.
func TestShowPrintsATurnsNotes(t *testing.T) {
	w := newWorld(t)
	goOn := filepath.Join(t.TempDir(), "go-on")
	w.setScript(append([]fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"t1"}`),
		fakeagent.Out(`{"type":"turn.started"}`),
		{"wait_file": goOn},
	}, fakeagent.Completes("after the removal", 700)[2:]...))
	id := w.spawn("write on")
	path := filepath.Join(w.State, "sessions", id, "turns", "turn_1.jsonl")
	sessionstest.Eventually(t, "the first lines", func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), "turn.started")
	})
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	touch(t, goOn)
	w.ok("wait", id)
	for _, cmd := range []string{"show", "logs"} {
		if out := w.ok(cmd, id); !strings.Contains(out, "note: turn file removed while the turn ran") {
			t.Fatalf("%s prints no note of the removal:\n%s", cmd, out)
		}
	}
}

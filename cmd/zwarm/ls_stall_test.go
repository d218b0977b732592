package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// ls says a worker is stalled once the stall watcher's thresholds say so.
func TestLsShowsAStalledSession(t *testing.T) {
	w := newWorld(t)
	w.setScript([]fakeagent.Step{fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), {"wait_file": filepath.Join(t.TempDir(), "never")}})
	id := w.spawn("stall")
	sessionstest.Eventually(t, "the agent to run", func() bool { return w.record(id).Agent != nil })
	if out := w.ok("ls"); strings.Contains(out, "stalled") {
		t.Fatalf("stalled at once:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(w.State, "config.toml"), []byte("[watchers.stall]\nafter = \"1ms\"\nfirst_event = \"1ms\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// On a terminal: piped, the STATUS column stays the bare status.
	sessionstest.Eventually(t, "ls to say stalled", func() bool {
		out, _ := w.onTerminal(200, []string{"NO_COLOR=1"}, "", "ls")
		return strings.Contains(out, "running, stalled")
	})
}

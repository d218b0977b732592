package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// A kill that waits out an agent's grace period says so on a terminal as
// it waits, on stderr, as every command that blocks does.
func TestKillShowsItsProgressOnATerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	released := filepath.Join(t.TempDir(), "released")
	t.Cleanup(func() { os.WriteFile(released, nil, 0o600) })
	w.setScript(fakeagent.Completes("ok", 5), "stubborn", []fakeagent.Step{{"ignore_sigterm": true},
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), {"wait_file": released}})
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), "kill_grace = \"1s\"\n")
	id := w.spawn("stubborn")
	sessionstest.Eventually(t, "the stubborn agent to ignore SIGTERM", func() bool { return w.record(id).ThreadID != "" })
	out, code := w.onTerminal(100, nil, "", "kill", id)
	if code != 0 || !strings.Contains(visible(out), "killing "+id[:8]+" · ") || !strings.Contains(visible(out), id[:8]+" killed") {
		t.Fatalf("exit %d:\n%s", code, visible(out))
	}
}

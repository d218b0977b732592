package codex

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The threads a person started in a worker's dir during an attach are
// found from the rollouts codex wrote there since, whatever else codex
// wrote meanwhile (another dir, the session's own thread, older days).
func TestThreadsSinceFindsTheNewConversationsInADir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	start := time.Now().Add(-time.Minute)
	write := func(id, cwd string, mod time.Time) {
		t.Helper()
		day := filepath.Join(home, "sessions", mod.Format("2006"), mod.Format("01"), mod.Format("02"))
		os.MkdirAll(day, 0o700)
		path := filepath.Join(day, "rollout-"+mod.Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
		line := `{"timestamp":"x","type":"session_meta","payload":{"id":"` + id + `","cwd":"` + cwd + `"}}` + "\n"
		if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, mod, mod)
	}
	write("old-thread", "/w/1", time.Now())
	write("before", "/w/1", start.Add(-time.Hour))
	write("elsewhere", "/w/2", time.Now())
	write("first-new", "/w/1", start.Add(10*time.Second))
	write("last-new", "/w/1", start.Add(20*time.Second))
	got := (&Adapter{}).ThreadsSince("/w/1", start, "old-thread")
	if !slices.Equal(got, []string{"first-new", "last-new"}) {
		t.Errorf("threads since the attach in /w/1: %v, want [first-new last-new]", got)
	}
}

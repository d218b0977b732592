package claude

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The sessions a person started in a worker's dir during an attach (/clear
// in claude's CLI) are found from the transcripts claude wrote since,
// whose lines name the dir.
func TestThreadsSinceFindsTheNewConversationsInADir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", home)
	start := time.Now().Add(-time.Minute)
	write := func(project, id, cwd string, mod time.Time) {
		t.Helper()
		dir := filepath.Join(home, "projects", project)
		os.MkdirAll(dir, 0o700)
		path := filepath.Join(dir, id+".jsonl")
		body := `{"type":"queue-operation","operation":"enqueue","sessionId":"` + id + `"}` + "\n" +
			`{"type":"user","cwd":"` + cwd + `","sessionId":"` + id + `"}` + "\n"
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, mod, mod)
	}
	write("-w-1", "old-thread", "/w/1", time.Now())
	write("-w-1", "before", "/w/1", start.Add(-time.Hour))
	write("-w-2", "elsewhere", "/w/2", time.Now())
	write("-w-1", "new", "/w/1", start.Add(10*time.Second))
	got := (&Adapter{}).ThreadsSince("/w/1", start, "old-thread")
	if !slices.Equal(got, []string{"new"}) {
		t.Errorf("sessions since the attach in /w/1: %v, want [new]", got)
	}
}

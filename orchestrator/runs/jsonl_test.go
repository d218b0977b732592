package runs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestJournalDropsATornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	os.WriteFile(path, []byte("{\"a\":1}\n{\"b\":2}\n{\"c\":"), 0o600)
	lines, err := ReadLines(path)
	if err != nil || len(lines) != 2 || string(lines[1]) != `{"b":2}` {
		t.Fatalf("%q %v", lines, err)
	}
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(true, []byte(`{"d":4}`), []byte("{\n\"e\": 5}")); err != nil {
		t.Fatal(err)
	}
	j.Close()
	b, _ := os.ReadFile(path)
	if string(b) != "{\"a\":1}\n{\"b\":2}\n{\"d\":4}\n{\"e\":5}\n" {
		t.Fatalf("%q", b)
	}
	// A file that is one torn line is empty.
	os.WriteFile(path, []byte(strings.Repeat("x", 100<<10)), 0o600)
	j, err = OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Fatalf("size %d", fi.Size())
	}
}

func TestListRunsShowsADeadRunInterrupted(t *testing.T) {
	dir := t.TempDir()
	for i, st := range []Status{StatusCompleted, StatusRunning} {
		id := []string{"aaaa1111-0000-4000-8000-000000000000", "bbbb2222-0000-4000-8000-000000000000"}[i]
		os.MkdirAll(RunDir(dir, id), 0o700)
		rec := &Record{Version: 1, ID: id, Status: st, Limits: Limits{MaxSteps: 5}}
		if st == StatusRunning {
			rec.Owner = nil // nobody: its process is gone
		}
		if err := WriteRecord(RunDir(dir, id), rec); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, RunsDir, "cccc"), 0o700) // no run.json
	list, err := ListRuns(dir)
	if len(list) != 2 || err == nil || !strings.Contains(err.Error(), "1 runs could not be read") {
		t.Fatalf("%d runs, %v", len(list), err)
	}
	for _, r := range list {
		if r.Status == StatusRunning {
			t.Errorf("run %s shown running without an owner", r.ID)
		}
	}
	if _, err := ResolveRun(dir, "aaaa"); err != nil {
		t.Error(err)
	}
	if _, err := ResolveRun(dir, "a/../b"); err == nil || !strings.Contains(err.Error(), "invalid run id") {
		t.Errorf("%v", err)
	}
}

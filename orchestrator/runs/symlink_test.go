package runs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/zwarm/zwarm/sessions/state"
)

// A run's files are never written through a symlink planted at one of
// them or at the run's directory: the symlink is named.
func TestRunFilesAreNotWrittenThroughASymlink(t *testing.T) {
	stateDir := t.TempDir()
	dir := RunDir(stateDir, "3f2a9c1d-0000-4000-8000-0000000000aa")
	os.MkdirAll(dir, 0o700)
	target := filepath.Join(t.TempDir(), "target")
	os.WriteFile(target, []byte("precious\n"), 0o600)
	untouched := func(what string) {
		t.Helper()
		if b, _ := os.ReadFile(target); string(b) != "precious\n" {
			t.Errorf("%s went through the symlink: %q", what, b)
		}
	}
	named := func(what string, err error, path string) {
		t.Helper()
		var se *state.SymlinkError
		if !errors.As(err, &se) || se.Path != path {
			t.Errorf("%s: want %s named, got %v", what, path, err)
		}
	}
	for _, name := range []string{EventsFile, ConversationFile} {
		p := filepath.Join(dir, name)
		os.Symlink(target, p)
		j, err := OpenJournal(p)
		if err == nil {
			j.f.Close()
		}
		named(name, err, p)
		untouched(name)
	}
	lock := filepath.Join(dir, lockFile)
	os.Symlink(target, lock)
	_, err := LockRun(dir)
	named("the run's lock", err, lock)
	untouched("the run's lock")

	rec := filepath.Join(dir, RecordFile)
	os.Symlink(target, rec)
	named("run.json", WriteRecord(dir, &Record{ID: "x"}), rec)
	untouched("run.json")

	// runs/ itself swapped for a symlink to elsewhere.
	outside := t.TempDir()
	os.Rename(filepath.Join(stateDir, RunsDir), filepath.Join(stateDir, "runs.real"))
	os.Symlink(outside, filepath.Join(stateDir, RunsDir))
	os.Mkdir(filepath.Join(outside, filepath.Base(dir)), 0o700)
	_, err = OpenJournal(filepath.Join(dir, EventsFile))
	named("a symlinked runs dir", err, filepath.Join(stateDir, RunsDir))
	if _, err := os.Stat(filepath.Join(outside, filepath.Base(dir), EventsFile)); err == nil {
		t.Error("the journal was made outside the stateDir dir")
	}
}

package sessions_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// A state dir whose config.toml says [state] locks = "lease" has lease
// files for its locks, there only while held.
func TestLeaseLocksFromConfig(t *testing.T) {
	t.Setenv(store.LocksEnv, "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, config.File), []byte("[state]\nlocks = \"lease\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := state.NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(st.Dir(), "land.lock")
	l, err := state.LockFile(st.Dir(), path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	l.Unlock()
	if err != nil || !strings.Contains(string(b), `"token":`) {
		t.Fatalf("the lock file while held: %q, %v; want a lease record", b, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the lock file once let go: %v", err)
	}
}

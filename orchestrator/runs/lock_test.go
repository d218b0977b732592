package runs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/store"
)

// A run is taken by one process at a time, whatever the state dir's lock
// scheme: a second LockRun fails at once, saying so, until the first lets
// go. Under leases the lock file exists only while the run is held.
func TestARunIsHeldByOneProcessAtATime(t *testing.T) {
	for _, scheme := range []store.Scheme{store.SchemeFlock, store.SchemeLease} {
		t.Run(string(scheme), func(t *testing.T) {
			t.Setenv(store.LocksEnv, string(scheme))
			dir := RunDir(t.TempDir(), "0123abcd")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			l, err := LockRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := LockRun(dir); err == nil || !strings.Contains(err.Error(), "another zwarm process is running it") {
				t.Fatalf("a run already held: %v", err)
			}
			l.Unlock()
			_, err = os.Stat(filepath.Join(dir, lockFile))
			if gone := errors.Is(err, fs.ErrNotExist); gone != (scheme == store.SchemeLease) {
				t.Fatalf("the lock file once let go: %v", err)
			}
			l, err = LockRun(dir)
			if err != nil {
				t.Fatalf("a run let go: %v", err)
			}
			l.Unlock()
		})
	}
}

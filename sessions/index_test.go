package sessions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
)

// The listing cache is never the source of truth: missing, current, stale
// after a change, truncated or garbage, a listing says what the records
// say, and reports the record it cannot read every time.
func TestListingAgreesWithTheRecordsWhateverTheCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := state.NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: st})
	ctx := context.Background()
	const n = 2*listing.LoadBatch + 17 // several batches, read in parallel
	for i := range n {
		sessionstest.WriteSettledRecord(t, st, i)
	}
	corrupt := "3f2affff-0000-4000-8000-000000000000"
	os.MkdirAll(st.SessionDir(corrupt), 0o700)
	os.WriteFile(st.MetaPath(corrupt), []byte(`{"version":1,"id":`), 0o600)
	settle := func() { // as in a state dir in use: no change within the racy window
		old := time.Now().Add(-time.Minute)
		os.Chtimes(st.SessionsDir(), old, old)
	}
	settle()

	check := func(when string) {
		t.Helper()
		list, err := m.List(ctx, listing.Options{})
		var le *listing.Error
		if !errors.As(err, &le) || len(le.Records) != 1 || le.Records[0].ID != corrupt {
			t.Fatalf("%s: the corrupt record is not reported alone: %v", when, err)
		}
		got := make([]string, len(list))
		for i, s := range list {
			got[i] = sessionstest.Fingerprint(s)
		}
		if want := sessionstest.RecordsOnDisk(t, st, corrupt); !slices.Equal(got, want) {
			t.Fatalf("%s: %d sessions listed, %d recorded; first difference:\n%s", when, len(got), len(want), sessionstest.FirstDiff(got, want))
		}
	}
	check("no cache")
	if _, err := os.Stat(listing.IndexPath(st)); err != nil {
		t.Fatalf("the first listing left no cache: %v", err)
	}
	check("cache current")

	// A settled record changed the way a follow-up changes one.
	changed := sessionstest.SessionID(n / 2)
	_, err = st.UpdateSettled(context.Background(), changed, func(tx *state.Tx) error {
		s := tx.Session()
		s.LastMessage, s.Task = "changed after the cache was written", "a new task"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check("a settled record changed")

	if _, err := m.Remove(ctx, sessionstest.SessionID(3), false); err != nil {
		t.Fatal(err)
	}
	check("a session removed")
	settle()
	sessionstest.WriteSettledRecord(t, st, n+5)
	check("a session added")
	settle()
	check("cache current again")

	whole, err := os.ReadFile(listing.IndexPath(st))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{
		"cache truncated":  whole[:len(whole)/2],
		"cache empty":      nil,
		"cache is garbage": []byte("ZWIX\x01\x00\x00\x00 not a cache at all"),
		"cache of another": append([]byte("XXXX"), whole[4:]...),
	} {
		if err := os.WriteFile(listing.IndexPath(st), body, 0o600); err != nil {
			t.Fatal(err)
		}
		check(name)
		check(name + ", then rebuilt")
	}
}

// A meta.json changed behind zwarm's back (rewritten in place, even with
// its size and modification time put back) is read again, not taken from
// the listing cache: a broken one is reported as broken on every listing,
// as it is without the cache, and clean leaves it alone.
func TestListingSeesARecordBrokenBehindItsBack(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(path string, before os.FileInfo) error
	}{
		{"cut short in place", func(path string, _ os.FileInfo) error {
			return os.WriteFile(path, []byte(`{"version":1,"id":`), 0o600)
		}},
		{"overwritten, size and modification time put back", func(path string, before os.FileInfo) error {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			if _, err := f.WriteAt([]byte(strings.Repeat("x", int(before.Size()))), 0); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			return os.Chtimes(path, before.ModTime(), before.ModTime())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := state.NewStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			m := sessions.NewManager(sessions.ManagerOptions{Store: st})
			ctx := context.Background()
			for _, i := range []int{0, 3, 6} { // no worktrees: clean removes them outright
				sessionstest.WriteSettledRecord(t, st, i)
			}
			old := time.Now().Add(-time.Minute)
			os.Chtimes(st.SessionsDir(), old, old) // a state dir in use: its directory is trusted
			for range 2 {
				if list, err := m.List(ctx, listing.Options{}); err != nil || len(list) != 3 {
					t.Fatalf("before: %d sessions, %v", len(list), err)
				}
			}
			broken := sessionstest.SessionID(3)
			meta := st.MetaPath(broken)
			before, err := os.Stat(meta)
			if err != nil {
				t.Fatal(err)
			}
			nextClockTick(t, meta)
			if err := tc.corrupt(meta, before); err != nil {
				t.Fatal(err)
			}
			for _, when := range []string{"first listing", "second listing"} {
				list, err := m.List(ctx, listing.Options{})
				var le *listing.Error
				if !errors.As(err, &le) || len(le.Records) != 1 || le.Records[0].ID != broken {
					t.Fatalf("%s: the broken record is not reported: %v", when, err)
				}
				for _, s := range list {
					if s.ID == broken {
						t.Fatalf("%s: the broken record is listed as %s", when, s.Status())
					}
				}
				if len(list) != 2 {
					t.Fatalf("%s: %d sessions listed, want the 2 whole ones", when, len(list))
				}
			}
			res, err := m.Clean(ctx, sessions.CleanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(res.Removed, broken) {
				t.Fatalf("clean removed the broken record: %v", res.Removed)
			}
			if _, err := os.Stat(meta); err != nil {
				t.Fatalf("clean deleted the broken record: %v", err)
			}
			if len(res.Removed) != 2 {
				t.Fatalf("clean removed %v, want the 2 whole sessions", res.Removed)
			}
		})
	}
}

// nextClockTick waits until the file system's clock has moved past the
// change time of path, so that a change made now gets a different one
// (the kernel stamps files from a clock that advances in ticks).
func nextClockTick(t *testing.T, path string) {
	t.Helper()
	var was unix.Stat_t
	if err := unix.Stat(path, &was); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(filepath.Dir(path), ".tick")
	defer os.Remove(probe)
	for {
		if err := os.WriteFile(probe, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		var now unix.Stat_t
		if err := unix.Stat(probe, &now); err != nil {
			t.Fatal(err)
		}
		if now.Ctim.Nano() > was.Ctim.Nano() {
			return
		}
		runtime.Gosched()
	}
}

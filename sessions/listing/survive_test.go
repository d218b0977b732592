package listing_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
)

// agreesWithRecords fails unless a full listing and a short one say what
// the records say.
func agreesWithRecords(t *testing.T, c *listing.Cache, st *state.Store, when string) {
	t.Helper()
	want := sessionstest.RecordsOnDisk(t, st, "")
	for _, limit := range []int{0, 3} {
		list, err := c.List(listing.Options{Limit: limit})
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		got := make([]string, len(list))
		for i, s := range list {
			got[i] = sessionstest.Fingerprint(s)
		}
		w := want
		if limit > 0 {
			w = want[:min(limit, len(want))]
		}
		if !slices.Equal(got, w) {
			t.Fatalf("%s, limit %d: %d listed, %d recorded; first difference:\n%s", when, limit, len(got), len(w), sessionstest.FirstDiff(got, w))
		}
	}
}

const indexWriterEnv = "ZWARM_SESSIONS_TEST_INDEX_WRITER"

// indexWriter lists the state dir at dir again and again, each time after
// changing the sessions dir's times, so that every listing rewrites the
// cache, and rewrites the cache in between.
func indexWriter(dir string) int {
	st, err := state.NewStore(dir)
	if err != nil {
		return 1
	}
	m := listing.NewCache(st, asRecorded)
	for i := 0; ; i++ {
		old := time.Now().Add(-time.Hour + time.Duration(i)*time.Millisecond)
		os.Chtimes(st.SessionsDir(), old, old)
		if _, err := m.List(listing.Options{}); err != nil {
			return 1
		}
		// Writing is most of what it does from here: a kill lands in it.
		for range 5 {
			listing.RewriteCache(st)
		}
	}
}

// A listing killed (SIGKILL) at any instant, the cache half written
// included, leaves a cache the next listing can use or rebuilds: never one
// that lists what the records do not say.
func TestListingCacheSurvivesAKillWhileWritten(t *testing.T) {
	t.Parallel()
	st, err := state.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := listing.NewCache(st, asRecorded)
	for i := range 1000 {
		sessionstest.WriteSettledRecord(t, st, i)
	}
	for round := range 8 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), indexWriterEnv+"="+st.Dir())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(50+rand.IntN(150)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		if err := cmd.Wait(); err == nil {
			t.Fatal("the writer stopped by itself")
		}
		// A change the killed writer's cache cannot know.
		if _, err := st.UpdateSettled(context.Background(), sessionstest.SessionID(round), func(tx *state.Tx) error {
			s := tx.Session()
			s.LastMessage = fmt.Sprintf("changed in round %d", round)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		agreesWithRecords(t, m, st, fmt.Sprintf("round %d", round))
	}
	// What the killed listings left is removed by the next that writes
	// the cache (here at once; in use, once it is a minute old).
	defer listing.SetStaleTemp(0)()
	before, _ := filepath.Glob(filepath.Join(st.Dir(), "."+listing.IndexFile+".tmp*"))
	t.Logf("%d temporary files left by the kills", len(before))
	// One such file for certain, cut short.
	if err := os.WriteFile(filepath.Join(st.Dir(), "."+listing.IndexFile+".tmp123"), []byte("ZWIX\x06"), 0o600); err != nil {
		t.Fatal(err)
	}
	sessionstest.WriteSettledRecord(t, st, 5000)
	agreesWithRecords(t, m, st, "after the kills")
	if left, _ := filepath.Glob(filepath.Join(st.Dir(), "."+listing.IndexFile+".tmp*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// Two commands listing at once while sessions are added, removed and
// changed never leave a cache that disagrees with the records.
func TestListingCacheWrittenByTwoAtOnce(t *testing.T) {
	t.Parallel()
	st, err := state.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		sessionstest.WriteSettledRecord(t, st, i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		// Each its own Manager and Store, as two processes have.
		other, err := state.NewStore(st.Dir())
		if err != nil {
			t.Fatal(err)
		}
		om := listing.NewCache(other, asRecorded)
		wg.Go(func() {
			for ctx.Err() == nil {
				om.List(listing.Options{})
				om.List(listing.Options{Limit: 5})
			}
		})
	}
	m := listing.NewCache(st, asRecorded)
	for i := range 20 {
		sessionstest.WriteSettledRecord(t, st, 200+i)
		if err := st.Remove(context.Background(), sessionstest.SessionID(i)); err != nil {
			t.Fatal(err)
		}
		if _, err := st.UpdateSettled(context.Background(), sessionstest.SessionID(100+i), func(tx *state.Tx) error {
			s := tx.Session()
			s.Task = fmt.Sprintf("changed %d", i)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	agreesWithRecords(t, m, st, "after both")
	old := time.Now().Add(-time.Minute)
	os.Chtimes(st.SessionsDir(), old, old) // trusted from now on
	agreesWithRecords(t, m, st, "settled")
	agreesWithRecords(t, m, st, "settled, again")
}

// A state dir copied elsewhere (other inodes; times kept, as cp -a and
// rsync -a keep them) lists what its records say, its cache included, even
// a record that differs from the original's with the same size and times.
func TestListingCacheOfACopiedStateDir(t *testing.T) {
	st, err := state.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := listing.NewCache(st, asRecorded)
	for i := range 300 {
		sessionstest.WriteSettledRecord(t, st, i)
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(st.SessionsDir(), old, old)
	agreesWithRecords(t, m, st, "original")

	dst := t.TempDir()
	copyTree(t, st.Dir(), dst)
	cst, err := state.NewStore(dst)
	if err != nil {
		t.Fatal(err)
	}
	// The copy's newest record is another one of the same size and times
	// (a restore from elsewhere, say).
	id := sessionstest.SessionID(299)
	fi, err := os.Stat(cst.MetaPath(id))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cst.MetaPath(id))
	if err != nil {
		t.Fatal(err)
	}
	was := []byte(`"last_message": "done 299"`)
	if !bytes.Contains(data, was) {
		t.Fatalf("no %s in %s", was, data)
	}
	data = bytes.Replace(data, was, []byte(`"last_message": "DONE 299"`), 1)
	if err := os.WriteFile(cst.MetaPath(id), data, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(cst.MetaPath(id), fi.ModTime(), fi.ModTime())
	os.Chtimes(cst.SessionsDir(), old, old)
	cm := listing.NewCache(cst, asRecorded)
	agreesWithRecords(t, cm, cst, "copy")
	agreesWithRecords(t, cm, cst, "copy, again")
	if list, _ := cm.List(listing.Options{Limit: 1}); len(list) != 1 || list[0].LastMessage != "DONE 299" {
		t.Fatalf("the copy lists the original's record")
	}
}

// copyTree copies a directory tree, keeping files' modes and times.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, path)
			return os.MkdirAll(to, fi.Mode().Perm())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, data, fi.Mode().Perm()); err != nil {
			return err
		}
		return os.Chtimes(to, fi.ModTime(), fi.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(dirs) // the deepest first: filling a directory changes its times
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(src, d)
		if err := os.Chtimes(filepath.Join(dst, rel), fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
}

// asRecorded takes records as they are: the sessions these tests write
// are settled.
func asRecorded([]string) func(*record.Session) *record.Session {
	return func(s *record.Session) *record.Session { return s }
}

// TestMain runs the test binary as the cache writer a test kills, when
// asked to.
func TestMain(m *testing.M) {
	if dir := os.Getenv(indexWriterEnv); dir != "" {
		// Rewrites the listing cache until killed (see
		// TestListingCacheSurvivesAKillWhileWritten).
		os.Exit(indexWriter(dir))
	}
	os.Exit(m.Run())
}

// The session list's generation holds under the lease scheme too (a state
// dir on a network file system, ZWARM_LOCKS=lease), with listings killed
// and writing at once: this test binary runs those tests again under it.
func TestListingCacheUnderTheLeaseScheme(t *testing.T) {
	sessionstest.UnderLeases(t, []string{"TestListingCacheSurvivesAKillWhileWritten", "TestListingCacheWrittenByTwoAtOnce"}, false)
}

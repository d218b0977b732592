package sessions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// A running session whose record (meta.json) is removed, its directory
// left: nobody could see or kill it any more, so its supervisor stops the
// agent and everything it started, as for a removed directory.
func TestSessionRecordRemovedWhileItRuns(t *testing.T) {
	t.Parallel()
	if how, err := proc.Containment(); !strings.HasPrefix(how, "cgroup") {
		t.Skipf("cgroup containment is not available here (%v): zwarm doctor says the same", err)
	}
	w := newWorld(t)
	s, sup, escaper := runningEscaper(t, w, t.TempDir())
	defer syscall.Kill(escaper, syscall.SIGKILL)
	cg := w.Store.SessionCgroup(s.ID)
	// Removed under the session's lock: a progress write that loaded the
	// record before an unlocked removal would put it back, and the session
	// would rightly run on.
	l, err := w.Store.Lock(s.ID)
	if err != nil {
		t.Fatal(err)
	}
	err = os.Remove(w.Store.MetaPath(s.ID))
	l.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); sup.Alive(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			meta, err := os.ReadFile(w.Store.MetaPath(s.ID))
			log, _ := os.ReadFile(filepath.Join(w.Store.SessionDir(s.ID), "supervisor.log"))
			t.Fatalf("the supervisor did not stop the session within a minute of its record's removal; the record now: %v %s\nsupervisor.log:\n%s", err, meta, log)
		}
	}
	if sessionstest.Alive(escaper) {
		t.Fatalf("the escaper (pid %d) outlived its supervisor", escaper)
	}
	if _, err := os.Stat(cg); cg != "" && !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the session's cgroup %s is left (%v)", cg, err)
	}
	// What is left is named as broken, and rm --force removes it.
	assertNoRecord(t, w, s.ID)
}

// A settled session whose record was removed, and an empty session
// directory: both are listed as broken (not silently left out), kill and
// rm name them as such rather than "no such session", and rm --force
// removes them.
func TestSessionWithoutRecordIsBrokenNotAbsent(t *testing.T) {
	w := newWorld(t)
	s := w.spawn("settle")
	w.wait(s.ID)
	if err := os.Remove(w.Store.MetaPath(s.ID)); err != nil {
		t.Fatal(err)
	}
	assertNoRecord(t, w, s.ID)

	empty := store.NewID()
	if err := os.Mkdir(w.Store.SessionDir(empty), 0o700); err != nil {
		t.Fatal(err)
	}
	assertNoRecord(t, w, empty)
}

// assertNoRecord checks what zwarm makes of a session directory without a
// record, and removes it with rm --force.
func assertNoRecord(t *testing.T, w *world, id string) {
	t.Helper()
	ctx := context.Background()
	list, err := w.Manager.List(ctx, listing.Options{})
	var le *listing.Error
	if !errors.As(err, &le) || len(le.Records) != 1 || le.Records[0].ID != id || !strings.Contains(le.Records[0].Err.Error(), "meta.json") {
		t.Fatalf("listing: %d sessions, %v; want %s named as broken", len(list), err, record.ShortID(id))
	}
	var re *state.RecordError
	if _, err := w.Manager.Get(ctx, id); !errors.As(err, &re) || errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("get: %v; want a record error", err)
	}
	if _, err := w.Manager.Kill(ctx, id); !errors.As(err, &re) || errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("kill: %v; want a record error", err)
	}
	if _, err := w.Manager.Remove(ctx, id, false); err == nil || errors.Is(err, sessions.ErrNotFound) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("rm: %v; want a refusal that names --force", err)
	}
	if _, err := w.Manager.Remove(ctx, id, true); err != nil {
		t.Fatalf("rm --force: %v", err)
	}
	if _, err := os.Lstat(w.Store.SessionDir(id)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("rm --force left %s (%v)", w.Store.SessionDir(id), err)
	}
	if _, err := w.Manager.List(ctx, listing.Options{}); err != nil {
		t.Fatalf("listing after rm --force: %v", err)
	}
}

// A session whose supervisor died and whose record was then removed:
// nothing can reach its processes through the session, so they are
// orphans, which doctor lists and kill --orphans stops.
func TestOrphansOfASessionWithoutRecord(t *testing.T) {
	if how, err := proc.Containment(); !strings.HasPrefix(how, "cgroup") {
		t.Skipf("cgroup containment is not available here (%v): zwarm doctor says the same", err)
	}
	w := newWorld(t)
	s, sup, escaper := runningEscaper(t, w, t.TempDir())
	defer syscall.Kill(escaper, syscall.SIGKILL)
	cg := w.Store.SessionCgroup(s.ID)
	t.Cleanup(func() {
		// Should the test fail before kill --orphans, nothing else would.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if proc.KillCgroup(ctx, cg) == nil {
			proc.RemoveCgroup(cg)
		}
	})
	sup.Signal(syscall.SIGKILL)
	sessionstest.Eventually(t, "the supervisor to die", func() bool { return !sup.Alive() })
	if err := os.Remove(w.Store.MetaPath(s.ID)); err != nil {
		t.Fatal(err)
	}
	list, err := w.Manager.Orphans()
	if err != nil || len(list) != 1 || list[0].ID != s.ID || list[0].Cgroup != cg {
		t.Fatalf("orphans %+v, %v; want session %s", list, err, record.ShortID(s.ID))
	}
	if _, err := w.Manager.KillOrphans(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sessionstest.Alive(escaper) {
		t.Fatalf("the escaper (pid %d) survived kill --orphans", escaper)
	}
	if _, err := os.Stat(cg); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the orphan's cgroup %s is left (%v)", cg, err)
	}
	if _, err := os.Stat(filepath.Join(w.Store.SessionDir(s.ID), "turns")); err != nil {
		t.Fatalf("kill --orphans touched the session's directory: %v", err)
	}
}

package sessions_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/watch"
)

// inotifyWatches counts the inotify watches of the inotify instances this
// process holds that are not in before (fd numbers), as the kernel lists
// them in /proc/self/fdinfo.
func inotifyWatches(t *testing.T, before map[string]bool) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if before[e.Name()] {
			continue
		}
		if link, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); link != "anon_inode:inotify" {
			continue
		}
		f, err := os.Open(filepath.Join("/proc/self/fdinfo", e.Name()))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "inotify wd:") {
				n++
			}
		}
		f.Close()
	}
	return n
}

func inotifyFDs(t *testing.T) map[string]bool {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range ents {
		out[e.Name()] = true
	}
	return out
}

// A subscription to every session, with a listing or a filter, watches
// the sessions dir, sessions.gen and the sessions that may change by
// themselves (the running one: its dir, turns and inbox), not the dir of
// each of 500 settled sessions.
func TestSubscriptionToEverySessionWatchesNoSettledDir(t *testing.T) {
	m, _ := listingDir(t, 500, 500)
	for _, opt := range []watch.SubscribeOptions{{Listing: true}, {Filter: listing.Options{Active: true}, Events: true}, {}} {
		before := inotifyFDs(t)
		sub, err := m.Subscribe(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		for u := range sub.C() {
			if u.Synced {
				break
			}
		}
		n := inotifyWatches(t, before)
		sub.Close()
		if n == 0 || n > 5 {
			t.Fatalf("%+v: %d inotify watches; want the sessions dir, sessions.gen and the running session's 3", opt, n)
		}
	}
}

// A settled session changed through zwarm (a follow-up, a landing:
// sessions.gen advances first) is seen by a subscription to every
// session, which does not watch its dir; so are one removed and one
// made, and a reopened one by a subscription to the active ones.
func TestEverySessionSeesSettledRecordsChangeThroughTheGeneration(t *testing.T) {
	m, st := listingDir(t, 50)
	// A ceiling for the whole test, generous for a machine at load 8 and more.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sub, first, _ := initialOf(t, m)
	if first.Listing.Len() != 50 {
		t.Fatalf("listing of %d", first.Listing.Len())
	}
	active, err := m.Subscribe(ctx, watch.SubscribeOptions{Filter: listing.Options{Active: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer active.Close()
	if u := <-active.C(); !u.Synced || u.ID != "" {
		t.Fatalf("active sessions at first: %+v", u)
	}
	next := func(sub *watch.Subscription, what string, want func(watch.Update) bool) watch.Update {
		t.Helper()
		return awaitUpdate(ctx, t, sub, what, want)
	}

	changed := sessionstest.SessionID(7)
	if _, err := st.UpdateSettled(ctx, changed, func(tx *state.Tx) error {
		s := tx.Session()
		s.LastMessage = "changed"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	u := next(sub, "changed", func(u watch.Update) bool { return u.ID == changed })
	if u.Initial || u.Session == nil || u.Session.LastMessage != "changed" || u.Prev != record.StatusKilled {
		t.Fatalf("changed: %+v", u)
	}

	removed := sessionstest.SessionID(8)
	if _, err := m.Remove(ctx, removed, false); err != nil {
		t.Fatal(err)
	}
	if u := next(sub, "removed", func(u watch.Update) bool { return u.ID == removed }); !u.Removed || u.Prev != record.StatusCompleted {
		t.Fatalf("removed: %+v", u)
	}

	sessionstest.WriteSettledRecord(t, st, 900)
	if u := next(sub, "made", func(u watch.Update) bool { return u.ID == sessionstest.SessionID(900) }); !u.Initial || u.Session == nil {
		t.Fatalf("made: %+v", u)
	}

	reopened := sessionstest.SessionID(9)
	self, err := proc.RefOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	self.Role = record.RoleSupervisor
	if _, err := st.UpdateSettled(ctx, reopened, func(tx *state.Tx) error {
		s := tx.Session()
		statusfield.Set(s, record.StatusRunning)
		s.Owner = self
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*watch.Subscription{sub, active} {
		u := next(s, "reopened", func(u watch.Update) bool { return u.ID == reopened })
		if u.Session == nil || u.Session.Status() != record.StatusRunning {
			t.Fatalf("reopened: %+v", u)
		}
	}
	// Running now, its dir is watched: a write that does not go through
	// sessions.gen is seen too.
	if _, err := st.Update(reopened, func(tx *state.Tx) error {
		s := tx.Session()
		s.LastMessage = "working"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if u := next(sub, "running", func(u watch.Update) bool { return u.ID == reopened }); u.Session.LastMessage != "working" {
		t.Fatalf("running: %+v", u)
	}
}

// With sessions.gen gone, a subscription to every session watches every
// session dir instead: a settled record changed after is still seen.
func TestEverySessionWithoutTheGeneration(t *testing.T) {
	m, st := listingDir(t, 20)
	sub, _, _ := initialOf(t, m)
	if err := os.Remove(st.GenPath()); err != nil {
		t.Fatal(err)
	}
	id := sessionstest.SessionID(3)
	deadline := time.After(time.Minute)
	for try := 0; ; try++ {
		// The fallback is in place once it was told the file went: a
		// write before may go unseen, one after may not.
		if _, err := st.Update(id, func(tx *state.Tx) error {
			s := tx.Session()
			s.LastMessage = "changed"
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case u := <-sub.C():
			if u.ID == id && u.Session != nil && u.Session.LastMessage == "changed" {
				return
			}
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatalf("the change of session %s (last message \"changed\") was not seen within a minute of writes", record.ShortID(id))
		}
	}
}

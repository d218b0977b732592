package sessions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/watch"
)

// listingDir writes n settled sessions, a few failed or killed, and the
// running ones given (owned by this process, which lives), and lists them
// once, so that the cache holds the settled ones; the sessions dir's
// times are set back so that the cache trusts it.
func listingDir(t *testing.T, n int, running ...int) (*sessions.Manager, *state.Store) {
	t.Helper()
	st, err := state.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: testAdapters{}})
	for i := range n {
		sessionstest.WriteSettledRecord(t, st, i)
		switch {
		case i%5 == 0:
			setStatus(t, st, i, record.StatusFailed)
		case i%7 == 0:
			setStatus(t, st, i, record.StatusKilled)
		}
	}
	for _, i := range running {
		sessionstest.WriteSettledRecord(t, st, i)
		setStatus(t, st, i, record.StatusRunning)
	}
	settleDir(t, m, st)
	return m, st
}

// setStatus rewrites session i's record with status st; running is owned
// by this process.
func setStatus(t *testing.T, st *state.Store, i int, status record.Status) {
	t.Helper()
	s, err := st.Load(sessionstest.SessionID(i))
	if err != nil {
		t.Fatal(err)
	}
	statusfield.Set(s, status)
	if status == record.StatusRunning {
		self, err := proc.RefOf(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		self.Role = record.RoleSupervisor
		s.Owner, s.EndedAt = self, nil
		s.Turns[len(s.Turns)-1].EndedAt = nil
	}
	if err := st.Save(s); err != nil {
		t.Fatal(err)
	}
}

// settleDir lists the state dir after setting the sessions dir's times
// back: the cache is written, and trusted after.
func settleDir(t *testing.T, m *sessions.Manager, st *state.Store) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(st.SessionsDir(), old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := m.List(context.Background(), listing.Options{}); err != nil {
		t.Fatal(err)
	}
}

// initialOf subscribes with a listing and returns its first update and
// the initial updates that follow it.
func initialOf(t *testing.T, m *sessions.Manager) (*watch.Subscription, watch.Update, []watch.Update) {
	t.Helper()
	sub, err := m.Subscribe(context.Background(), watch.SubscribeOptions{Listing: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	var first watch.Update
	var rest []watch.Update
	for u := range sub.C() {
		if u.Listing != nil {
			first = u
		} else {
			rest = append(rest, u)
		}
		if u.Synced {
			return sub, first, rest
		}
	}
	t.Fatalf("subscription ended: %v", sub.Err())
	return nil, watch.Update{}, nil
}

// The listing holds every settled session as a full listing shows it,
// newest first: in its briefs, read back whole, and walked; the running
// ones follow as updates of their own, their records whole.
func TestListingHoldsTheSettledSessionsAsListed(t *testing.T) {
	m, _ := listingDir(t, 300, 300, 301, 302)
	list, err := m.List(context.Background(), listing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	var settled []*record.Session
	for _, s := range list {
		if s.Settled() {
			want = append(want, sessionstest.Fingerprint(s))
			settled = append(settled, s)
		}
	}
	_, first, rest := initialOf(t, m)
	l := first.Listing
	if l.Len() != 300 || first.Pending != 3 || !first.Initial || first.ID != "" {
		t.Fatalf("listing of %d, %d pending; want 300 and 3", l.Len(), first.Pending)
	}
	for i, s := range settled {
		b := l.Brief(i)
		cost, priced := 0.0, s.CostUSD != nil
		if priced {
			cost = *s.CostUSD
		}
		ended := time.Time{}
		if s.EndedAt != nil {
			ended = *s.EndedAt
		}
		if b.ID != s.ID || b.Status != s.Status() || b.Adapter != s.Adapter || b.Model != s.Model || b.Source != s.Source ||
			!b.CreatedAt.Equal(s.CreatedAt) || !b.UpdatedAt.Equal(s.UpdatedAt) || !b.EndedAt.Equal(ended) || b.Turn != s.Turn ||
			b.Tokens != s.Usage.TotalTokens || b.Priced != priced || b.CostUSD != cost {
			t.Fatalf("brief %d: %+v\nof %s", i, b, sessionstest.Fingerprint(s))
		}
		if at, ok := l.Find(s.ID); !ok || at != i {
			t.Fatalf("find %s: %d %v; want %d", s.ID, at, ok, i)
		}
	}
	if _, ok := l.Find(sessionstest.SessionID(300)); ok {
		t.Fatal("a running session found in the listing")
	}
	at := make([]int, l.Len())
	for i := range at {
		at[i] = len(at) - 1 - i // in any order
	}
	read, err := l.Sessions(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range read {
		if got := sessionstest.Fingerprint(s); got != want[at[k]] {
			t.Fatalf("read back %d:\n got  %s\n want %s", at[k], got, want[at[k]])
		}
	}
	var walked []string
	if err := l.Each(context.Background(), func(i int, s *record.Session) bool {
		if i != len(walked) {
			t.Fatalf("walked %d after %d", i, len(walked))
		}
		walked = append(walked, sessionstest.Fingerprint(s))
		return true
	}); err != nil || !slices.Equal(walked, want) {
		t.Fatalf("walk: %v\n%s", err, sessionstest.FirstDiff(walked, want))
	}
	if len(rest) != 3 || !rest[2].Synced {
		t.Fatalf("%d updates after the listing; want the 3 running, the last synced", len(rest))
	}
	for _, u := range rest {
		if !u.Initial || u.Session == nil || u.Session.Status() != record.StatusRunning || len(u.Session.Turns) != 2 {
			t.Fatalf("running session's update: %+v", u)
		}
	}
}

// A cache that is behind leaves out of the listing what it is wrong
// about, and those sessions come as their records: sessions added and
// removed since it was written, and the settled records changed through
// zwarm (sessions.gen moved). A record changed behind zwarm's back (the
// generation did not move) is found by the check of every record that
// follows the first state, and comes as a change.
func TestListingOfACacheBehind(t *testing.T) {
	m, st := listingDir(t, 200, 200)
	sessionstest.WriteSettledRecord(t, st, 500)
	sessionstest.WriteSettledRecord(t, st, 501)
	if err := os.RemoveAll(st.SessionDir(sessionstest.SessionID(10))); err != nil {
		t.Fatal(err)
	}
	edited := sessionstest.SessionID(20)
	s, err := st.Load(edited)
	if err != nil {
		t.Fatal(err)
	}
	s.LastMessage, s.UpdatedAt = "edited by hand", time.Now().UTC()
	data, _ := json.Marshal(s)
	tmp := filepath.Join(st.SessionDir(edited), "meta.json.tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, st.MetaPath(edited)); err != nil {
		t.Fatal(err)
	}
	sub, first, rest := initialOf(t, m)
	l := first.Listing
	if l.Len() != 199 || first.Pending != 3 {
		t.Fatalf("listing of %d, %d pending; want 199 and 3", l.Len(), first.Pending)
	}
	for _, id := range []string{sessionstest.SessionID(10), sessionstest.SessionID(500), sessionstest.SessionID(200)} {
		if _, ok := l.Find(id); ok {
			t.Fatalf("%s in the listing", record.ShortID(id))
		}
	}
	got := map[string]*record.Session{}
	for _, u := range rest {
		got[u.ID] = u.Session
	}
	if len(got) != 3 || got[sessionstest.SessionID(500)] == nil || got[sessionstest.SessionID(501)] == nil || got[sessionstest.SessionID(200)] == nil {
		t.Fatalf("updates after the listing: %v", got)
	}
	select {
	case u := <-sub.C():
		if u.ID != edited || u.Initial || u.Session == nil || u.Session.LastMessage != "edited by hand" || u.Prev != record.StatusFailed {
			t.Fatalf("after the first state: %+v", u)
		}
	case <-time.After(time.Minute):
		t.Fatal("the record edited by hand was not told of within a minute; want an update of it after the first state")
	}
	sub.Close()

	through := sessionstest.SessionID(21)
	if _, err := st.UpdateSettled(context.Background(), through, func(tx *state.Tx) error {
		s := tx.Session()
		s.LastMessage = "through zwarm"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, first, rest = initialOf(t, m)
	if _, ok := first.Listing.Find(through); ok || first.Listing.Len() != 197 {
		t.Fatalf("after a change through zwarm: %d listed, the changed one among them: %v", first.Listing.Len(), ok)
	}
	for _, u := range rest {
		if u.ID == through && u.Session.LastMessage == "through zwarm" {
			return
		}
	}
	t.Fatalf("the record changed through zwarm is not among the updates: %+v", rest)
}

// Without a cache, or with one far behind, the subscription brings it up
// to date first: the listing holds the settled sessions all the same.
func TestListingWithoutACache(t *testing.T) {
	m, st := listingDir(t, 400)
	os.Remove(filepath.Join(st.Dir(), listing.IndexFile))
	_, first, rest := initialOf(t, m)
	if first.Listing.Len() != 400 || first.Pending != 0 || len(rest) != 0 || !first.Synced {
		t.Fatalf("listing of %d, %d pending, %d updates; want 400 alone", first.Listing.Len(), first.Pending, len(rest))
	}
	if _, err := os.Stat(filepath.Join(st.Dir(), listing.IndexFile)); err != nil {
		t.Fatalf("the cache was not written: %v", err)
	}
}

// Subscriptions made while the state dir stands share one listing (the
// dashboard holds two); it is read until the last of them ends, and a
// change of the sessions dir makes a new one.
func TestListingSharedWhileTheStateStands(t *testing.T) {
	m, st := listingDir(t, 100)
	subA, a, _ := initialOf(t, m)
	_, b, _ := initialOf(t, m)
	if a.Listing != b.Listing {
		t.Fatal("two subscriptions of the same state made two listings")
	}
	subA.Close()
	if list, err := b.Listing.Sessions(context.Background(), []int{0, 99}); err != nil || list[1].ID != sessionstest.SessionID(0) {
		t.Fatalf("the listing after one of its subscriptions ended: %v", err)
	}
	sessionstest.WriteSettledRecord(t, st, 700)
	_, c, _ := initialOf(t, m)
	if c.Listing == a.Listing {
		t.Fatal("a listing shared across a change of the sessions dir")
	}
}

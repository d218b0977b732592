package sessions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
)

// A listing answered from the front of the cache (a limit, a filter) says
// what the records say, as the full listing does; a record it shows that
// changed behind zwarm's back is read again.
func TestListingFromTheFrontOfTheCache(t *testing.T) {
	st, err := state.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: st})
	ctx := context.Background()
	const n = 300
	for i := range n {
		sessionstest.WriteSettledRecord(t, st, i)
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(st.SessionsDir(), old, old) // a state dir in use: its directory is trusted
	if _, err := m.List(ctx, listing.Options{}); err != nil {
		t.Fatal(err)
	}
	all := sessionstest.RecordsOnDisk(t, st, "")
	for _, opt := range []listing.Options{
		{}, {Limit: 1}, {Limit: 20}, {Limit: n + 5}, {Status: record.StatusCompleted, Limit: 7}, {Status: record.StatusRunning},
		{Active: true}, {Text: "task 29"}, {Text: "task 29", Limit: 3}, {Source: record.UserSource, Limit: 50},
		{Source: record.RunSource("0199a213-81c0-7800-8aa1-bbab2a035a53")},
	} {
		if _, _, ok := m.Listings().Front(opt); !ok {
			t.Fatalf("%+v: the current cache did not answer", opt)
		}
		list, err := m.List(ctx, opt)
		if err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		var want []string
		for _, s := range recordSessions(t, st) {
			if opt.Match(s) && (opt.Limit == 0 || len(want) < opt.Limit) {
				want = append(want, sessionstest.Fingerprint(s))
			}
		}
		got := make([]string, len(list))
		for i, s := range list {
			got[i] = sessionstest.Fingerprint(s)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%+v: %d listed, want %d; first difference:\n%s", opt, len(got), len(want), sessionstest.FirstDiff(got, want))
		}
	}
	if len(all) != n {
		t.Fatalf("%d records", len(all))
	}

	// The newest record, broken in place: `ls -L 1` shows it, so it is
	// checked, reported, and the next one listed in its place.
	newest := sessionstest.SessionID(n - 1)
	nextClockTick(t, st.MetaPath(newest))
	if err := os.WriteFile(st.MetaPath(newest), []byte(`{"version":1,"id":`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"first", "second"} {
		list, err := m.List(ctx, listing.Options{Limit: 1})
		var le *listing.Error
		if !errors.As(err, &le) || len(le.Records) != 1 || le.Records[0].ID != newest {
			t.Fatalf("%s listing: the broken record is not reported: %v", when, err)
		}
		if len(list) != 1 || list[0].ID != sessionstest.SessionID(n-2) {
			t.Fatalf("%s listing: %d listed, want the one before the broken one", when, len(list))
		}
	}
}

// Page after page, each after the last one shown, a listing shows every
// session once and in order, from the cache's front or from a full
// listing, while new sessions are made at its head; a cursor travels as
// text.
func TestListingPageByPage(t *testing.T) {
	st, err := state.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: st})
	ctx := context.Background()
	const n = 200
	for i := range n {
		sessionstest.WriteSettledRecord(t, st, i)
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(st.SessionsDir(), old, old)
	var want []string
	for _, s := range recordSessions(t, st) {
		want = append(want, s.ID)
	}
	for _, from := range []string{"the front of the cache", "full listings"} {
		if from == "full listings" {
			os.Remove(filepath.Join(st.Dir(), listing.IndexFile))
		} else if _, err := m.List(ctx, listing.Options{}); err != nil {
			t.Fatal(err)
		}
		var got []string
		var after *listing.Cursor
		for page := 0; ; page++ {
			opt := listing.Options{Limit: 37, After: after}
			if from == "the front of the cache" {
				if _, _, ok := m.Listings().Front(opt); !ok {
					t.Fatalf("page %d: the current cache did not answer", page)
				}
			}
			list, err := m.List(ctx, opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) == 0 {
				break
			}
			if page > n {
				t.Fatalf("paged through %s: no end after %d pages", from, page)
			}
			for _, s := range list {
				got = append(got, s.ID)
			}
			if after, err = listing.ParseCursor(listing.CursorOf(list[len(list)-1]).String()); err != nil {
				t.Fatal(err)
			}
			if page == 1 && from == "full listings" {
				sessionstest.WriteSettledRecord(t, st, n+page) // made meanwhile: newer than every page
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("paged through %s: %d listed, want %d; first difference:\n%s", from, len(got), len(want), sessionstest.FirstDiff(got, want))
		}
	}
	for _, bad := range []string{"", "yesterday,abc", "2026-11-29T08:00:00Z", "2026-11-29T08:00:00Z,"} {
		if _, err := listing.ParseCursor(bad); err == nil {
			t.Errorf("cursor %q was taken", bad)
		}
	}
}

// recordSessions is every record read whole, newest first, as summaries.
func recordSessions(t *testing.T, st *state.Store) []*record.Session {
	t.Helper()
	ids, err := st.Ids()
	if err != nil {
		t.Fatal(err)
	}
	var out []*record.Session
	for _, id := range ids {
		if s, err := st.Load(id); err == nil {
			out = append(out, listing.SummaryOf(s))
		}
	}
	record.SortNewestFirst(out)
	return out
}

// A prefix is looked up in the cache while the sessions dir is as the
// cache saw it, and in the directory once it changed: either way it finds
// what the directory holds.
func TestPrefixLookupAgreesWithTheDirectory(t *testing.T) {
	st, err := state.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: st})
	for i := range 40 {
		sessionstest.WriteSettledRecord(t, st, i)
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(st.SessionsDir(), old, old)
	if _, err := m.List(context.Background(), listing.Options{}); err != nil {
		t.Fatal(err)
	}
	check := func(when string, fromCache bool) {
		t.Helper()
		if _, ok := listing.LookupPrefix(st, "3f2a"); ok != fromCache {
			t.Fatalf("%s: the cache answered: %v, want %v", when, ok, fromCache)
		}
		ids, _ := st.Ids()
		if c, err := m.Count(context.Background()); err != nil || c != len(ids) {
			t.Fatalf("%s: %d sessions counted, %v; %d there", when, c, err, len(ids))
		}
		for _, id := range ids {
			for _, p := range []string{id, id[:8], id[:13]} {
				if got, err := m.Resolve(p); err != nil || got != id {
					t.Fatalf("%s: %s: %q, %v", when, p, got, err)
				}
			}
		}
		var amb *sessions.AmbiguousError
		if _, err := m.Resolve("3f2a00"); !errors.As(err, &amb) || len(amb.Candidates) != len(ids) {
			t.Fatalf("%s: 3f2a00 is not ambiguous among all: %v", when, err)
		}
		if _, err := m.Resolve("3f2b"); !errors.Is(err, sessions.ErrNotFound) {
			t.Fatalf("%s: 3f2b: %v", when, err)
		}
	}
	check("cache current", true)
	sessionstest.WriteSettledRecord(t, st, 41)
	check("a session added since", false)
	os.Chtimes(st.SessionsDir(), old, old)
	if _, err := m.List(context.Background(), listing.Options{}); err != nil {
		t.Fatal(err)
	}
	check("cache current again", true)
	if _, err := m.Remove(context.Background(), sessionstest.SessionID(5), false); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Resolve(sessionstest.SessionID(5)[:8]); !errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("a removed session resolves: %v", err)
	}
	check("a session removed since", false)
}

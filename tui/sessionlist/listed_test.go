package sessionlist

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/watch"
	"github.com/zwarm/zwarm/tui/common"
)

// settledListing writes n settled sessions of varied status, usage and price into
// a state dir and returns the listing a subscription starts from.
func settledListing(t *testing.T, n int) *listing.Listing {
	t.Helper()
	dir := t.TempDir()
	created := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", 0x3f2a0000+i, i)
		end := created.Add(time.Minute)
		code := 0
		s := sessionstest.WithStatus(record.Session{Version: record.SchemaVersion, ID: id, Task: fmt.Sprintf("task %d", i),
			Adapter: "codex", Model: "gpt-5.1-codex", Source: record.UserSource, CreatedAt: created.Add(time.Duration(i%7) * time.Hour),
			EndedAt: &end, ExitCode: &code, Turn: 1, Usage: record.Usage{TotalTokens: int64(1000 * (i % 5))}}, record.StatusCompleted)
		switch i % 4 {
		case 1:
			sessionstest.SetStatus(&s, record.StatusFailed)
		case 2:
			sessionstest.SetStatus(&s, record.StatusKilled)
		}
		if i%3 != 0 {
			cost := float64(i%6) / 100
			s.CostUSD = &cost
		}
		data, _ := json.Marshal(s)
		os.MkdirAll(filepath.Join(dir, "sessions", id), 0o700)
		if err := os.WriteFile(filepath.Join(dir, "sessions", id, "meta.json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	st, err := state.NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := sessions.NewManager(sessions.ManagerOptions{Store: st}).Subscribe(context.Background(), watch.SubscribeOptions{Listing: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	u := <-sub.C()
	if u.Listing.Len() != n {
		t.Fatalf("listing of %d", u.Listing.Len())
	}
	return u.Listing
}

// The rows of a listing and of sessions held whole come in each sort order
// as if all were sorted together: the listing's order and the merge keep
// what sorting every record would give. Many sessions share a creation
// time, tokens and cost, so ties are broken as less breaks them.
func TestListingRowsInEachSortOrder(t *testing.T) {
	l := settledListing(t, 120)
	all, err := l.Sessions(context.Background(), func() []int {
		at := make([]int, l.Len())
		for i := range at {
			at[i] = i
		}
		return at
	}())
	if err != nil {
		t.Fatal(err)
	}
	cost := 0.02
	live := []*record.Session{
		new(sessionstest.WithStatus(record.Session{ID: "3f2a9999-0000-4000-8000-000000000001", CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
			Usage: record.Usage{TotalTokens: 3000}, CostUSD: &cost}, record.StatusRunning)),
		// One of the listing's, changed since: it stands for its entry.
		func() *record.Session { s := *all[7]; s.Usage.TotalTokens = 99999; return &s }(),
	}
	m := New(common.New())
	m.SetSize(200, 400)
	m.SetListing(l, nil)
	m.Upsert(live, nil)
	every := append(slices.DeleteFunc(slices.Clone(all), func(s *record.Session) bool { return s.ID == live[1].ID }), live...)
	key := func(s *record.Session) []float64 {
		c := -1.0
		if s.CostUSD != nil {
			c = *s.CostUSD
		}
		return []float64{float64(rank(s.Status())), -float64(s.Usage.TotalTokens), -c}
	}
	for sort := range sortCount {
		m.sort = sort
		m.rebuild()
		want := slices.Clone(every)
		slices.SortStableFunc(want, func(a, b *record.Session) int {
			if sort != ByNewest {
				if c := cmp.Compare(key(a)[sort-1], key(b)[sort-1]); c != 0 {
					return c
				}
			}
			return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(a.ID, b.ID))
		})
		var got, wantIDs []string
		for _, r := range m.rows {
			got = append(got, m.key(r))
		}
		for _, s := range want {
			wantIDs = append(wantIDs, s.ID)
		}
		if !slices.Equal(got, wantIDs) {
			t.Fatalf("sorted by %s:\n got  %v\n want %v", sort, got, wantIDs)
		}
	}
	tot := m.Totals()
	var tokens int64
	for _, s := range every {
		tokens += s.Usage.TotalTokens
	}
	if tot.Sessions != 121 || tot.Tokens != tokens || tot.Counts[record.StatusRunning] != 1 {
		t.Fatalf("totals: %+v; want 121 sessions, %d tokens", tot, tokens)
	}
}

package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
	"github.com/zwarm/zwarm/tui/common"
	"github.com/zwarm/zwarm/tui/sessionlist"
)

var mkstate struct {
	once sync.Once
	path string
	err  error
}

// generated is a state dir of n sessions made by sessions/internal/mkstate
// -mix, the generator of the scale figures (docs/performance.md): settled,
// some failed or killed, some without a price, some a run's workers.
func generated(t *testing.T, n int) *fixture {
	t.Helper()
	mkstate.once.Do(func() {
		dir, err := os.MkdirTemp("", "zwarm-mkstate")
		if err != nil {
			mkstate.err = err
			return
		}
		mkstate.path = filepath.Join(dir, "mkstate")
		if out, err := exec.Command("go", "build", "-buildvcs=false", "-o", mkstate.path, "../sessions/internal/mkstate").CombinedOutput(); err != nil {
			mkstate.err = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if mkstate.err != nil {
		t.Fatalf("build mkstate: %v", mkstate.err)
	}
	f := newFixture(t)
	if out, err := exec.Command(mkstate.path, "-dir", f.dir, "-n", fmt.Sprint(n), "-mix").CombinedOutput(); err != nil {
		t.Fatalf("mkstate: %v\n%s", err, out)
	}
	return f
}

// recorded adds up the records of a state dir the slow way: every
// meta.json read and decoded.
func recorded(t *testing.T, dir string) (counts map[record.Status]int, tokens int64, cost float64, unpriced int) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "sessions", "*", "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	counts = map[record.Status]int{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var s record.Session
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		counts[s.Status()]++
		tokens += s.Usage.TotalTokens
		if s.CostUSD != nil {
			cost += *s.CostUSD
		} else {
			unpriced++
		}
	}
	return counts, tokens, cost, unpriced
}

// The header's counts, tokens and money are those of every record of a
// generated state dir, whether the dashboard finds the listing cache
// current (its first state trusted, then checked) or missing (it is made
// first); so are the price note's models.
func TestHeaderCountsExactOnAGeneratedStateDir(t *testing.T) {
	f := generated(t, 3000)
	counts, tokens, cost, unpriced := recorded(t, f.dir)
	if counts[record.StatusFailed] == 0 || counts[record.StatusKilled] == 0 || unpriced == 0 {
		t.Fatalf("the generator made no mix: %v, %d unpriced", counts, unpriced)
	}
	want := []string{fmt.Sprintf("%d completed", counts[record.StatusCompleted]), fmt.Sprintf("%d failed", counts[record.StatusFailed]),
		fmt.Sprintf("%d killed", counts[record.StatusKilled]),
		fmt.Sprintf("%s tokens %s", render.Tokens(tokens), render.PartialCost(record.RoundCost(cost), false))}
	check := func(when string, m Model) {
		t.Helper()
		head := strings.SplitN(m.View(), "\n", 2)[0]
		for _, w := range want {
			if !strings.Contains(head, w) {
				t.Fatalf("%s: the header lacks %q:\n%s", when, w, head)
			}
		}
		if strings.Contains(head, "loading") || m.list.Count() != 3000 {
			t.Fatalf("%s: %d sessions; header:\n%s", when, m.list.Count(), head)
		}
		if !strings.Contains(m.priceNote, "local-llama-70b") {
			t.Fatalf("%s: price note %q", when, m.priceNote)
		}
	}
	check("no cache", f.newModel(200, 40))
	if _, err := os.Stat(filepath.Join(f.dir, "sessions.index")); err != nil {
		t.Fatalf("no cache was made: %v", err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(f.dir, "sessions"), old, old)
	if _, err := f.m.List(context.Background(), listing.Options{Limit: 1}); err != nil {
		t.Fatal(err)
	}
	check("cache current", f.newModel(200, 40))
}

// Every session is listed: the cursor reaches the oldest of a generated
// state dir, and the rows it passes are read from the listing as they
// come into view.
func TestEverySessionIsReachedByScrolling(t *testing.T) {
	f := generated(t, 3000)
	m := f.newModel(160, 40)
	if m.list.Count() != 3000 {
		t.Fatalf("%d sessions listed", m.list.Count())
	}
	m = press(t, m, "G")
	m = settle(t, m, func(m Model) bool { r, ok := m.list.SelectedRow(); return ok && !r.Partial })
	if r, _ := m.list.SelectedRow(); r.Session.ID != "3f2a0000-0000-4000-8000-000000000000" ||
		!strings.Contains(m.list.View(), "integration test 0 in the payment") {
		t.Fatalf("at the bottom: %+v\n%s", r.Session, m.list.View())
	}
	for range 3 {
		m = press(t, m, "pgup")
		m = settle(t, m, func(m Model) bool { r, ok := m.list.SelectedRow(); return ok && !r.Partial })
	}
	m = press(t, m, "g")
	if r, _ := m.list.SelectedRow(); r.Session.ID != "3f2a0bb7-0bb7-4000-8000-000000000bb7" {
		t.Fatalf("at the top: %s", r.Session.ID)
	}
}

// Until the sessions have all arrived the header says how many have, not
// counts of part of them; then it gives the counts.
func TestHeaderSaysLoadingUntilEverySessionIsIn(t *testing.T) {
	f := newFixture(t)
	for i := range 5 {
		f.add(i+1, record.StatusCompleted, fmt.Sprintf("settled %d", i), time.Duration(10-i)*time.Hour)
	}
	f.add(6, record.StatusRunning, "running 1", time.Minute)
	f.add(7, record.StatusRunning, "running 2", 2*time.Minute)
	sub, err := f.m.Subscribe(context.Background(), watch.SubscribeOptions{Listing: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var updates []watch.Update
	for u := range sub.C() {
		updates = append(updates, u)
		if u.Synced {
			break
		}
	}
	if len(updates) != 3 || updates[0].Listing == nil || updates[0].Pending != 2 {
		t.Fatalf("updates: %+v", updates)
	}
	m := New(context.Background(), Options{Sessions: f.m, StateDir: "/state", Now: func() time.Time { return clock }, Tick: -1})
	m = send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	if head := strings.SplitN(m.View(), "\n", 2)[0]; !strings.Contains(head, "loading sessions…") || strings.Contains(head, "no sessions") {
		t.Fatalf("before anything arrived: %s", head)
	}
	m.listSub = sub
	m = send(m, withFirstRows(updatesMsg{feed: listFeed, sub: sub, updates: updates[:1]}))
	t.Run("golden", func(t *testing.T) { golden.RequireEqual(t, []byte(m.View())) })
	m = send(m, updatesMsg{feed: listFeed, sub: sub, updates: updates[1:2]})
	if head := strings.SplitN(m.View(), "\n", 2)[0]; !strings.Contains(head, "loading 6 / 7") {
		t.Fatalf("one running session in: %s", head)
	}
	m = send(m, updatesMsg{feed: listFeed, sub: sub, updates: updates[2:]})
	if head := strings.SplitN(m.View(), "\n", 2)[0]; strings.Contains(head, "loading") || !strings.Contains(head, "5 completed") ||
		!strings.Contains(head, "2 running") {
		t.Fatalf("all in: %s", head)
	}

	// The update that ends the first load may share its batch with a
	// change after it (a record the cache had out of date): the load is
	// over all the same.
	m = New(context.Background(), Options{Sessions: f.m, StateDir: "/state", Now: func() time.Time { return clock }, Tick: -1})
	m = send(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	m.listSub = sub
	after := updates[2]
	after.Synced = false
	m = send(m, withFirstRows(updatesMsg{feed: listFeed, sub: sub, updates: append(append([]watch.Update(nil), updates...), after)}))
	if head := strings.SplitN(m.View(), "\n", 2)[0]; strings.Contains(head, "loading") || !strings.Contains(head, "5 completed") {
		t.Fatalf("the end of the first load followed by a change: %s", head)
	}
}

// The list pane on a listing whose summaries are not read yet: the rows
// have what the listing holds, and "…" for the task and the changes.
func TestListingPaneGoldens(t *testing.T) {
	f := standard(t)
	sub, err := f.m.Subscribe(context.Background(), watch.SubscribeOptions{Listing: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	first := <-sub.C()
	if first.Listing.Len() != 4 {
		t.Fatalf("listing of %d", first.Listing.Len())
	}
	c := common.New()
	for _, w := range []int{80, 120} {
		t.Run(fmt.Sprintf("sessionlist_%dx6", w), func(t *testing.T) {
			l := sessionlist.New(c)
			l.SetNow(clock)
			l.SetSize(w, 6)
			l.SetFocused(true)
			l.SetListing(first.Listing, nil)
			golden.RequireEqual(t, []byte(l.View()))
		})
	}
}

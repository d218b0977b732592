// Package sessionlist is the dashboard's table of runs and sessions: one
// row each, a run's workers right under it, filtered, sorted, with a cursor
// that stays on the same row while rows change under it.
//
// It holds the settled sessions as the subscription's Listing gives them,
// a few bytes each, and reads a session's summary from it only when its
// row comes into view (ReadRows); the sessions that changed since, running
// ones among them, are held as their updates gave them. Rows are laid out
// here rather than with bubbles/table, whose cells are truncated as raw
// bytes and so cannot carry a status colour.
package sessionlist

import (
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/tui/common"
)

// Sort orders.
type Sort int

const (
	ByNewest Sort = iota
	ByStatus
	ByTokens
	ByCost
	sortCount
)

func (s Sort) String() string {
	return [...]string{"newest", "status", "tokens", "cost"}[s]
}

// recent is how long a finished session stands out.
const recent = time.Minute

// Model is the list pane.
type Model struct {
	common.Common
	alerts map[string]string // session → the watcher whose alert stands
	// listed is the settled sessions of the subscription's listing; live
	// the sessions as their own updates gave them, which stand for their
	// listing entries.
	listed *listed
	live   map[string]*record.Session
	runs   map[string]*runs.Record
	totals map[string]totals // per run, with its workers
	rows   []ref
	cursor int
	offset int
	// selected is the selected row's key.
	selected     string
	focused      bool
	filter       string
	sort         Sort
	hideFinished bool
	now          time.Time
	running      int // sessions not settled and runs running, hidden ones too
}

var _ common.Component = (*Model)(nil)

// New returns an empty list.
func New(c common.Common) Model {
	return Model{Common: c, live: map[string]*record.Session{}, runs: map[string]*runs.Record{}, listed: newListed(nil, nil)}
}

// Init does nothing: the list is told its rows.
func (m *Model) Init() tea.Cmd { return nil }

// SetSize sets the pane's size; height counts the column header row.
func (m *Model) SetSize(w, h int) {
	m.Common.SetSize(w, h)
	m.clamp()
}

// SetFocused says whether keys go to this pane.
func (m *Model) SetFocused(f bool) { m.focused = f }

// SetNow sets the clock used for runtimes and the "just finished" mark.
func (m *Model) SetNow(t time.Time) { m.now = t }

// Replace sets the whole list: these sessions, and no listing.
func (m *Model) Replace(list []*record.Session) {
	m.listed = newListed(nil, nil)
	m.live = make(map[string]*record.Session, len(list))
	for _, s := range list {
		m.live[s.ID] = s
	}
	m.rebuild()
}

// SetListing sets the settled sessions the list starts from, and what was
// read of them already (summaries by position); the sessions upserted
// before are kept.
func (m *Model) SetListing(l *listing.Listing, read map[int]*record.Session) {
	m.listed = newListed(l, read)
	for id := range m.live {
		m.listed.hide(id)
	}
	m.rebuild()
}

// Listing is the listing the list shows, or nil.
func (m Model) Listing() *listing.Listing { return m.listed.l }

// Upsert adds or updates sessions and drops removed ones.
func (m *Model) Upsert(list []*record.Session, removed []string) {
	for _, s := range list {
		m.live[s.ID] = s
		m.listed.hide(s.ID)
	}
	for _, id := range removed {
		delete(m.live, id)
		m.listed.hide(id)
	}
	m.rebuild()
}

// UpsertRuns adds or updates runs and drops removed ones.
func (m *Model) UpsertRuns(list []*runs.Record, removed []string) {
	for _, r := range list {
		m.runs[r.ID] = r
	}
	for _, id := range removed {
		delete(m.runs, id)
	}
	m.rebuild()
}

// SelectFirst moves the selection to the first row.
func (m *Model) SelectFirst() {
	m.cursor, m.offset, m.selected = 0, 0, ""
	m.rebuild()
}

// SetAlert marks a session's row with a watcher's alert ("" clears it).
func (m *Model) SetAlert(id, watcher string) {
	if m.alerts == nil {
		m.alerts = map[string]string{}
	}
	if watcher == "" {
		delete(m.alerts, id)
	} else {
		m.alerts[id] = watcher
	}
}

// Get returns the session with id (from the listing, its summary as far
// as it was read), or nil.
func (m Model) Get(id string) *record.Session {
	if s := m.live[id]; s != nil {
		return s
	}
	if i, ok := m.listed.find(id); ok {
		s, _ := m.listed.session(i)
		return s
	}
	return nil
}

// Totals are the counts and usage of every session, hidden ones too.
func (m Model) Totals() common.Totals {
	live := common.Totals{}
	for _, s := range m.live {
		live.AddSession(s, 1)
	}
	return m.listed.totals.Plus(live)
}

// Runs returns every run, hidden or not.
func (m Model) Runs() []*runs.Record {
	out := make([]*runs.Record, 0, len(m.runs))
	for _, r := range m.runs {
		out = append(out, r)
	}
	return out
}

// Run returns the run with id, or nil.
func (m Model) Run(id string) *runs.Record { return m.runs[id] }

// RunTotals are run id's tokens and cost with its workers' (cost nil: a
// price is unknown).
func (m Model) RunTotals(id string) (int64, *float64) {
	t := m.totals[id]
	return t.tokens, t.cost
}

// SelectedRow is the row under the cursor; ok is false when there is none.
func (m Model) SelectedRow() (Row, bool) {
	if m.cursor < len(m.rows) {
		return m.row(m.rows[m.cursor]), true
	}
	return Row{}, false
}

// Selected is the session under the cursor, or nil (none, or a run).
func (m Model) Selected() *record.Session {
	if r, ok := m.SelectedRow(); ok {
		return r.Session
	}
	return nil
}

// SetFilter shows only the rows whose id, task, model, adapter, status,
// source or changes ("landed", "conflict") contain f (case-insensitive); a
// run that matches shows its workers, one that does not is shown for those
// that do. The listing's sessions are matched off the UI goroutine: the
// command returned reads them, and its Matched message shows them.
func (m *Model) SetFilter(f string) tea.Cmd {
	m.filter = strings.ToLower(strings.TrimSpace(f))
	cmd := m.listed.matchCmd(m.filter)
	m.rebuild()
	return cmd
}

// Matching says the listing's sessions are being matched against the
// filter: only the others are shown yet.
func (m Model) Matching() bool { return !m.listed.matched(m.filter) }

// Filter is the current filter.
func (m Model) Filter() string { return m.filter }

// CycleSort moves to the next sort order.
func (m *Model) CycleSort() Sort {
	m.sort = (m.sort + 1) % sortCount
	m.rebuild()
	return m.sort
}

// ToggleFinished hides or shows finished sessions; it reports whether
// they are shown now.
func (m *Model) ToggleFinished() bool {
	m.hideFinished = !m.hideFinished
	m.rebuild()
	return !m.hideFinished
}

// Len is how many sessions and runs there are, hidden ones too.
func (m Model) Len() int { return m.Count() + len(m.runs) }

// Shown is how many rows the list shows, the filter and hiding applied.
func (m Model) Shown() int { return len(m.rows) }

// Count is how many sessions there are, hidden ones too.
func (m Model) Count() int { return m.listed.count() + len(m.live) }

// Running reports whether a session, shown or not, is not settled, or a
// run is running.
func (m Model) Running() bool { return m.running > 0 }

func (m *Model) clamp() {
	if m.cursor >= len(m.rows) {
		m.cursor = max(0, len(m.rows)-1)
	}
	visible := max(1, m.Height-1)
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+visible {
		m.offset = m.cursor - visible + 1
	}
	m.offset = max(0, min(m.offset, len(m.rows)-visible))
	if m.cursor < len(m.rows) {
		m.selected = m.key(m.rows[m.cursor])
	}
}

// Update moves the cursor when the pane has focus.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || !m.focused {
		return m, nil
	}
	page := max(1, m.Height-2)
	switch {
	case key.Matches(k, m.KeyMap.Up):
		m.cursor--
	case key.Matches(k, m.KeyMap.Down):
		m.cursor++
	case key.Matches(k, m.KeyMap.PageUp):
		m.cursor -= page
	case key.Matches(k, m.KeyMap.PageDown):
		m.cursor += page
	case key.Matches(k, m.KeyMap.Top):
		m.cursor = 0
	case key.Matches(k, m.KeyMap.Bottom):
		m.cursor = len(m.rows) - 1
	default:
		return m, nil
	}
	m.cursor = max(0, m.cursor)
	m.clamp()
	return m, nil
}

// ShortHelp is the keys that move the cursor.
func (m *Model) ShortHelp() []key.Binding { return []key.Binding{m.KeyMap.Up, m.KeyMap.Down} }

// FullHelp is every key that moves the cursor.
func (m *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{m.KeyMap.Moves()}
}

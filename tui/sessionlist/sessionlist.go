// Package sessionlist is the dashboard's table of sessions: one row each,
// filtered, sorted, with a cursor that stays on the same session while rows
// change under it.
//
// Rows are laid out here rather than with bubbles/table, whose cells are
// truncated as raw bytes and so cannot carry a status colour.
package sessionlist

import (
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/tui/keys"
	"github.com/zwarm/zwarm/tui/styles"
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

// Model is the session list pane.
type Model struct {
	st            styles.Styles
	km            keys.KeyMap
	all           map[string]*sessions.Session
	rows          []*sessions.Session
	cursor        int
	offset        int
	selected      string
	width, height int
	focused       bool
	filter        string
	sort          Sort
	hideFinished  bool
	now           time.Time
	running       int // sessions not settled, hidden ones too
}

// New returns an empty list.
func New(st styles.Styles, km keys.KeyMap) Model {
	return Model{st: st, km: km, all: map[string]*sessions.Session{}}
}

// SetSize sets the pane's size; height counts the column header row.
func (m *Model) SetSize(w, h int) {
	m.width, m.height = w, h
	m.clamp()
}

// SetFocused says whether keys go to this pane.
func (m *Model) SetFocused(f bool) { m.focused = f }

// SetNow sets the clock used for runtimes and the "just finished" mark.
func (m *Model) SetNow(t time.Time) { m.now = t }

// Replace sets the whole list.
func (m *Model) Replace(list []*sessions.Session) {
	m.all = make(map[string]*sessions.Session, len(list))
	for _, s := range list {
		m.all[s.ID] = s
	}
	m.rebuild()
}

// Upsert adds or updates sessions and drops removed ones.
func (m *Model) Upsert(list []*sessions.Session, removed []string) {
	for _, s := range list {
		m.all[s.ID] = s
	}
	for _, id := range removed {
		delete(m.all, id)
	}
	m.rebuild()
}

// SelectFirst moves the selection to the first row.
func (m *Model) SelectFirst() {
	m.cursor, m.offset, m.selected = 0, 0, ""
	m.rebuild()
}

// Get returns the session with id, or nil.
func (m Model) Get(id string) *sessions.Session { return m.all[id] }

// All returns every session, hidden or not.
func (m Model) All() []*sessions.Session {
	out := make([]*sessions.Session, 0, len(m.all))
	for _, s := range m.all {
		out = append(out, s)
	}
	return out
}

// Selected is the session under the cursor, or nil.
func (m Model) Selected() *sessions.Session {
	if m.cursor < len(m.rows) {
		return m.rows[m.cursor]
	}
	return nil
}

// SetFilter shows only sessions whose id, task, model, adapter or status
// contain f (case-insensitive).
func (m *Model) SetFilter(f string) {
	m.filter = strings.ToLower(strings.TrimSpace(f))
	m.rebuild()
}

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

// Len is how many sessions there are, hidden ones too.
func (m Model) Len() int { return len(m.all) }

// Running reports whether a session, shown or not, is not settled.
func (m Model) Running() bool { return m.running > 0 }

func (m *Model) rebuild() {
	m.rows = m.rows[:0]
	m.running = 0
	for _, s := range m.all {
		if !s.Settled() {
			m.running++
		}
		if m.hideFinished && s.Settled() {
			continue
		}
		if m.filter != "" && !strings.Contains(strings.ToLower(strings.Join([]string{s.ID, s.Task, s.Model, s.Adapter, string(s.Status)}, " ")), m.filter) {
			continue
		}
		m.rows = append(m.rows, s)
	}
	less := func(a, b *sessions.Session) bool {
		switch m.sort {
		case ByStatus:
			if ra, rb := rank(a.Status), rank(b.Status); ra != rb {
				return ra < rb
			}
		case ByTokens:
			if a.Usage.TotalTokens != b.Usage.TotalTokens {
				return a.Usage.TotalTokens > b.Usage.TotalTokens
			}
		case ByCost:
			if ca, cb := costOf(a), costOf(b); ca != cb {
				return ca > cb
			}
		}
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return a.ID < b.ID
	}
	sort.Slice(m.rows, func(i, j int) bool { return less(m.rows[i], m.rows[j]) })
	// Keep the cursor on the session it was on.
	m.cursor = 0
	for i, s := range m.rows {
		if s.ID == m.selected {
			m.cursor = i
			break
		}
	}
	m.clamp()
}

// rank orders statuses by how much they want attention.
func rank(st sessions.Status) int {
	return map[sessions.Status]int{sessions.StatusFailed: 0, sessions.StatusRunning: 1, sessions.StatusPending: 2,
		sessions.StatusKilled: 3, sessions.StatusCompleted: 4}[st]
}

func costOf(s *sessions.Session) float64 {
	if s.CostUSD == nil {
		return -1
	}
	return *s.CostUSD
}

func (m *Model) clamp() {
	if m.cursor >= len(m.rows) {
		m.cursor = max(0, len(m.rows)-1)
	}
	visible := max(1, m.height-1)
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if m.cursor >= m.offset+visible {
		m.offset = m.cursor - visible + 1
	}
	m.offset = max(0, min(m.offset, len(m.rows)-visible))
	if s := m.Selected(); s != nil {
		m.selected = s.ID
	}
}

// Update moves the cursor when the pane has focus.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || !m.focused {
		return m, nil
	}
	page := max(1, m.height-2)
	switch {
	case key.Matches(k, m.km.Up):
		m.cursor--
	case key.Matches(k, m.km.Down):
		m.cursor++
	case key.Matches(k, m.km.PageUp):
		m.cursor -= page
	case key.Matches(k, m.km.PageDown):
		m.cursor += page
	case key.Matches(k, m.km.Top):
		m.cursor = 0
	case key.Matches(k, m.km.Bottom):
		m.cursor = len(m.rows) - 1
	default:
		return m, nil
	}
	m.cursor = max(0, m.cursor)
	m.clamp()
	return m, nil
}

// View renders the column headers and the visible rows, never wider than
// the pane.
func (m Model) View() string {
	return lipgloss.NewStyle().MaxWidth(m.width).Render(m.view())
}

func (m Model) view() string {
	cols := m.columns()
	var b strings.Builder
	// The focused pane is marked by ▶, which reads without colour too.
	head := "  "
	if m.focused {
		head = "▶ "
	}
	for _, c := range cols {
		head += fit(c.title, c.width) + " "
	}
	b.WriteString(m.st.Header.Render(strings.TrimRight(head, " ")))
	visible := max(1, m.height-1)
	if len(m.rows) == 0 {
		b.WriteString("\n" + m.st.Dim.Render("  no sessions match"))
		if m.filter == "" && !m.hideFinished {
			b.WriteString(m.st.Dim.Render(": start one with zwarm spawn \"TASK\""))
		}
	}
	for i := m.offset; i < len(m.rows) && i < m.offset+visible; i++ {
		b.WriteString("\n" + m.row(cols, m.rows[i], i == m.cursor))
	}
	return b.String()
}

func (m Model) row(cols []column, s *sessions.Session, selected bool) string {
	// The first cell marks the cursor and what stands out, readable without
	// colour: > selected, ! failed or follow-ups waiting, * just finished.
	cursor, flag := " ", " "
	if selected {
		cursor = ">"
	}
	attention := s.Status == sessions.StatusFailed || s.PendingInjects > 0
	fresh := s.Settled() && s.EndedAt != nil && m.now.Sub(*s.EndedAt) < recent
	switch {
	case attention:
		flag = "!"
	case fresh:
		flag = "*"
	}
	if selected {
		var plain strings.Builder
		plain.WriteString(cursor + flag)
		for _, c := range cols {
			plain.WriteString(fit(c.cell(s), c.width) + " ")
		}
		style := m.st.Selected
		if !m.focused {
			style = m.st.Bold
		}
		return style.Render(strings.TrimRight(plain.String(), " "))
	}
	var b strings.Builder
	b.WriteString(cursor + m.st.Attention.Render(flag))
	for _, c := range cols {
		cell := fit(c.cell(s), c.width)
		if c.title == "STATUS" {
			cell = m.st.StatusStyle(s.Status).Render(cell)
		}
		if fresh || attention {
			cell = m.st.Attention.Render(cell)
		}
		b.WriteString(cell + " ")
	}
	return strings.TrimRight(b.String(), " ")
}

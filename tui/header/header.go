// Package header is the dashboard's top line: how many runs and sessions
// are in each status, the tokens and money they used, and the state dir.
// While the sessions load, it says how many have, not counts that are not
// all there yet.
package header

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/tui/common"
	"github.com/zwarm/zwarm/tui/styles"
)

// Model is the header pane. Its height is always one line.
type Model struct {
	common.Common
	stateDir  string
	counts    map[record.Status]int
	runCounts map[runs.Status]int
	runs      int
	// Tokens and money of the sessions and of the runs' own models (their
	// workers are sessions, counted once).
	tokens, runTokens int64
	cost, runCost     float64
	// unpriced and runUnpriced count the sessions and runs whose model
	// has no price: the money is then a part, "$0.20+?".
	unpriced, runUnpriced int
	// loading says the sessions are not all loaded yet: loaded of total
	// are (total 0: not known yet).
	loading       bool
	loaded, total int
}

var _ common.Component = (*Model)(nil)

// New returns a header for the state dir.
func New(c common.Common, stateDir string) Model {
	return Model{Common: c, stateDir: stateDir, counts: map[record.Status]int{}, runCounts: map[runs.Status]int{}}
}

// Init does nothing: the header is told what to show.
func (m *Model) Init() tea.Cmd { return nil }

// Update does nothing: the header takes no keys.
func (m *Model) Update(tea.Msg) (tea.Model, tea.Cmd) { return m, nil }

// ShortHelp is empty: the header takes no keys.
func (m *Model) ShortHelp() []key.Binding { return nil }

// FullHelp is empty: the header takes no keys.
func (m *Model) FullHelp() [][]key.Binding { return nil }

// SetSessions recomputes the totals from every session (hidden ones too).
func (m *Model) SetSessions(all []*record.Session) { m.SetTotals(common.TotalsOf(all)) }

// SetTotals sets the sessions' counts and usage.
func (m *Model) SetTotals(t common.Totals) {
	m.counts, m.tokens, m.cost, m.unpriced = map[record.Status]int{}, t.Tokens, t.Cost, t.Unpriced
	for st, n := range t.Counts {
		m.counts[st] = n
	}
}

// SetLoading says whether the sessions are still loading, and how many of
// how many are loaded (total 0: not known yet). While they load, the
// header says so in place of their counts and usage.
func (m *Model) SetLoading(loading bool, loaded, total int) {
	m.loading, m.loaded, m.total = loading, loaded, total
}

// SetRuns recomputes the runs' counts and their models' usage.
func (m *Model) SetRuns(all []*runs.Record) {
	m.runCounts, m.runs, m.runTokens, m.runCost, m.runUnpriced = map[runs.Status]int{}, len(all), 0, 0, 0
	for _, r := range all {
		m.runCounts[r.Status]++
		m.runTokens += r.Usage.TotalTokens
		if r.CostUSD != nil {
			m.runCost += *r.CostUSD
		} else {
			m.runUnpriced++
		}
	}
}

var runStatuses = []runs.Status{runs.StatusRunning, runs.StatusWaiting, runs.StatusCompleted, runs.StatusFailed,
	runs.StatusLimited, runs.StatusInterrupted}

// View renders the header on one line. When the counts in words would
// push the tokens and money off the line, they are given as icons and
// numbers.
func (m Model) View() string {
	line, used := m.line(false)
	if used > m.Width {
		line, _ = m.line(true)
	}
	return lipgloss.NewStyle().MaxWidth(m.Width).Render(line)
}

// line renders the header; used is the width up to the money.
func (m Model) line(short bool) (string, int) {
	count := func(icon string, n int, status string) string {
		if short {
			return fmt.Sprintf("%s%d", icon, n)
		}
		return fmt.Sprintf("%s %d %s", icon, n, status)
	}
	parts := []string{m.Styles.Title.Render("zwarm")}
	// label goes before the first count that follows it.
	label := ""
	add := func(s string) {
		parts = append(parts, label+s)
		label = ""
	}
	if m.runs > 0 {
		label = "runs: "
		for _, st := range runStatuses {
			if n := m.runCounts[st]; n > 0 {
				add(m.Styles.RunStatusStyle(string(st)).Render(count(styles.RunIcon(string(st)), n, string(st))))
			}
		}
		label = "sessions: "
	}
	before := len(parts)
	if m.loading {
		// Counts of what has loaded so far would read as counts of all.
		text := "loading sessions…"
		if m.total > 0 {
			text = fmt.Sprintf("loading %s / %s", grouped(m.loaded), grouped(m.total))
		}
		add(m.Styles.Dim.Render(text))
		used := lipgloss.Width(strings.Join(parts, "  "))
		return m.withDir(parts, used), used
	}
	for _, st := range record.Statuses {
		if n := m.counts[st]; n > 0 {
			add(m.Styles.StatusStyle(st).Render(count(styles.Icon(st), n, string(st))))
		}
	}
	if len(parts) == before {
		add(m.Styles.Dim.Render("no sessions"))
	}
	money := render.PartialCost(record.RoundCost(m.cost+m.runCost), m.unpriced+m.runUnpriced == 0)
	parts = append(parts, fmt.Sprintf("%s tokens %s", render.Tokens(m.tokens+m.runTokens), money))
	used := lipgloss.Width(strings.Join(parts, "  "))
	return m.withDir(parts, used), used
}

// withDir ends the header with the state dir's path, in the room that is
// left after used cells: its end, which tells two dirs apart, after "…"
// when the whole does not fit; nothing when there is no room for it.
func (m Model) withDir(parts []string, used int) string {
	dir, room := render.SafeLine(m.stateDir), m.Width-used-2
	if w := ansi.StringWidth(dir); w > room {
		if room < 2 {
			return strings.Join(parts, "  ")
		}
		dir = ansi.TruncateLeft(dir, w-room+1, "…")
	}
	return strings.Join(append(parts, m.Styles.Dim.Render(dir)), "  ")
}

// grouped writes n with its thousands apart: 12,345.
func grouped(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

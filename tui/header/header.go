// Package header is the dashboard's top line: how many sessions are in
// each status, the tokens and money they used, and the state dir.
package header

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/tui/styles"
)

// Model is the header pane.
type Model struct {
	st       styles.Styles
	stateDir string
	width    int
	counts   map[sessions.Status]int
	tokens   int64
	cost     float64
	unpriced int
}

// New returns a header for the state dir.
func New(st styles.Styles, stateDir string) Model {
	return Model{st: st, stateDir: stateDir, counts: map[sessions.Status]int{}}
}

// SetSize sets the width.
func (m *Model) SetSize(w, _ int) { m.width = w }

// SetSessions recomputes the totals from every session (hidden ones too).
func (m *Model) SetSessions(all []*sessions.Session) {
	m.counts, m.tokens, m.cost, m.unpriced = map[sessions.Status]int{}, 0, 0, 0
	for _, s := range all {
		m.counts[s.Status]++
		m.tokens += s.Usage.TotalTokens
		if s.CostUSD != nil {
			m.cost += *s.CostUSD
		} else if !s.Usage.IsZero() {
			m.unpriced++
		}
	}
}

// View renders the header on one line.
func (m Model) View() string {
	parts := []string{m.st.Title.Render("zwarm")}
	for _, st := range sessions.Statuses {
		if n := m.counts[st]; n > 0 {
			parts = append(parts, m.st.StatusStyle(st).Render(fmt.Sprintf("%s %d %s", styles.Icon(st), n, st)))
		}
	}
	if len(parts) == 1 {
		parts = append(parts, m.st.Dim.Render("no sessions"))
	}
	money := render.Money(m.cost)
	if m.unpriced > 0 {
		money += fmt.Sprintf(" (+%d unpriced)", m.unpriced)
	}
	parts = append(parts, fmt.Sprintf("%s tokens %s", render.Tokens(m.tokens), money), m.st.Dim.Render(render.SafeLine(m.stateDir)))
	line := strings.Join(parts, "  ")
	return lipgloss.NewStyle().MaxWidth(m.width).Render(line)
}

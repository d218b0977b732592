package sessionlist

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
)

// View renders the column headers and the visible rows, never wider than
// the pane.
func (m Model) View() string {
	return lipgloss.NewStyle().MaxWidth(m.Width).Render(m.view())
}

func (m Model) view() string {
	visible := max(1, m.Height-1)
	shown := make([]Row, 0, visible)
	for i := m.offset; i < len(m.rows) && i < m.offset+visible; i++ {
		shown = append(shown, m.row(m.rows[i]))
	}
	cols := m.columns(shown)
	var b strings.Builder
	// The focused pane is marked by ▶, which reads without colour too.
	head := "  "
	if m.focused {
		head = "▶ "
	}
	for _, c := range cols {
		head += fit(c.title, c.width) + " "
	}
	b.WriteString(m.Styles.Header.Render(strings.TrimRight(head, " ")))
	if len(m.rows) == 0 {
		b.WriteString("\n" + m.Styles.Dim.Render("  no sessions match"))
		if m.filter == "" && !m.hideFinished {
			b.WriteString(m.Styles.Dim.Render(": start one with zwarm spawn \"TASK\""))
		}
	}
	for k, r := range shown {
		b.WriteString("\n" + m.line(cols, r, m.offset+k == m.cursor))
	}
	return b.String()
}

func (m Model) line(cols []column, r Row, selected bool) string {
	// The first cell marks the cursor and what stands out, readable without
	// colour: > selected, ⚠ a watcher's alert, ! failed (a run: stopped
	// short) or follow-ups waiting, * just finished.
	cursor, flag := " ", " "
	if selected {
		cursor = ">"
	}
	attention, fresh := m.marks(r)
	alerted := false
	if r.Session != nil {
		_, alerted = m.alerts[r.Session.ID]
	}
	switch {
	case alerted:
		flag, attention = "⚠", true
	case attention:
		flag = "!"
	case fresh:
		flag = "*"
	}
	if selected {
		var plain strings.Builder
		plain.WriteString(cursor + flag)
		for _, c := range cols {
			plain.WriteString(fit(c.cell(r), c.width) + " ")
		}
		style := m.Styles.Selected
		if !m.focused {
			style = m.Styles.Bold
		}
		return style.Render(strings.TrimRight(plain.String(), " "))
	}
	var b strings.Builder
	b.WriteString(cursor + m.Styles.Attention.Render(flag))
	for _, c := range cols {
		cell := fit(c.cell(r), c.width)
		if c.title == "STATUS" {
			if r.Run != nil {
				cell = m.Styles.RunStatusStyle(string(r.Run.Status)).Render(cell)
			} else {
				cell = m.Styles.StatusStyle(r.Session.Status()).Render(cell)
			}
		}
		if fresh || attention {
			cell = m.Styles.Attention.Render(cell)
		}
		b.WriteString(cell + " ")
	}
	return strings.TrimRight(b.String(), " ")
}

// marks says whether a row wants attention and whether it just finished.
func (m Model) marks(r Row) (attention, fresh bool) {
	if run := r.Run; run != nil {
		switch run.Status {
		case runs.StatusFailed, runs.StatusLimited, runs.StatusInterrupted:
			attention = true
		}
		return attention, run.EndedAt != nil && m.now.Sub(*run.EndedAt) < recent
	}
	s := r.Session
	return s.Status() == record.StatusFailed || s.PendingInjects > 0, s.Settled() && s.EndedAt != nil && m.now.Sub(*s.EndedAt) < recent
}

package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// layout sizes the panes: the list gets up to two fifths of the height
// (less when there are few sessions), the detail pane the rest; the diff
// view, while open, all of it.
func (m *Model) layout() {
	if m.width == 0 || m.height == 0 {
		return
	}
	avail := max(2, m.height-3) // header, status line, help line
	rows := m.list.Len() + 1
	listH := min(max(4, rows), max(4, avail*2/5))
	if listH > avail-2 {
		listH = max(1, avail/2)
	}
	m.header.SetSize(m.width, 1)
	m.list.SetSize(m.width, listH)
	m.detail.SetSize(m.width, avail-listH)
	m.diff.SetSize(m.width, avail)
	m.prompt.SetSize(m.width, 1)
	m.help.Width = m.width
}

// View draws the screen.
func (m Model) View() string {
	if m.width == 0 {
		return "loading…"
	}
	var b strings.Builder
	b.WriteString(m.header.View() + "\n")
	avail := max(2, m.height-3)
	short := m.km.ShortHelp()
	switch {
	case m.diff.Active():
		short = m.km.DiffHelp()
		if m.showHelp {
			b.WriteString(m.helpView(avail))
		} else {
			b.WriteString(m.diff.View())
		}
	case m.showHelp:
		list := m.list.View()
		b.WriteString(list + "\n")
		b.WriteString(m.helpView(avail - lipgloss.Height(list)))
	default:
		b.WriteString(m.list.View() + "\n")
		b.WriteString(m.detail.View())
	}
	b.WriteString("\n" + m.statusLine() + "\n")
	b.WriteString(m.help.ShortHelpView(short))
	return fitHeight(b.String(), m.height)
}

// helpView is the help overlay, h lines high.
func (m Model) helpView(h int) string {
	help := m.help
	help.ShowAll = true
	h = max(1, h)
	return lipgloss.NewStyle().Height(h).MaxHeight(h).Render(
		m.st.Header.Render("keys") + "  (any key closes)\n\n" + help.View(m.km))
}

func (m Model) statusLine() string {
	if m.prompt.Active() {
		return m.prompt.View()
	}
	if !m.loaded && m.status == "" {
		return m.st.Status.Render("loading sessions…")
	}
	line := m.status
	if line == "" && m.priceNote != "" {
		line = m.priceNote
	}
	if m.hasRunning() {
		line = spinnerFrames[m.frame%len(spinnerFrames)] + " " + line
	}
	style := m.st.Status
	if m.statusErr {
		style = m.st.StatusError
	}
	return lipgloss.NewStyle().MaxWidth(m.width).Render(style.Render(line))
}

var spinnerFrames = []string{"◐", "◓", "◑", "◒"}

func (m Model) hasRunning() bool { return m.list.Running() }

// fitHeight pads or cuts the screen to exactly h lines, so nothing scrolls.
func fitHeight(s string, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

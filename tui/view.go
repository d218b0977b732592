package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// SetSize sizes the screen and lays the panes out on it.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.layout()
}

// layout sizes the panes: the list gets up to two fifths of the height
// (less when there are few sessions), the detail pane the rest; the diff
// view, while open, all of it.
func (m *Model) layout() {
	if m.Width == 0 || m.Height == 0 {
		return
	}
	avail := m.bodyHeight()
	// The rows shown and their header (with none, the line saying so): a
	// short list leaves the rest to the story, not to blank lines.
	rows := max(1, m.list.Shown()) + 1
	listH := min(rows, max(4, avail*2/5))
	if listH > avail-2 {
		listH = max(1, avail/2)
	}
	m.header.SetSize(m.Width, 1)
	m.list.SetSize(m.Width, listH)
	m.detail.SetSize(m.Width, avail-listH)
	m.diff.SetSize(m.Width, avail)
	m.prompt.SetSize(m.Width, 1)
	m.help.Width = m.Width
}

// View draws the screen.
func (m Model) View() string {
	if m.Width == 0 {
		return "loading…"
	}
	var b strings.Builder
	b.WriteString(m.header.View() + "\n")
	avail := m.bodyHeight()
	switch {
	case m.diff.Active():
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
		b.WriteString(fitHeight(m.list.View(), m.list.Height) + "\n")
		b.WriteString(fitHeight(m.detail.View(), m.detail.Height))
	}
	b.WriteString("\n" + m.statusLine() + "\n")
	b.WriteString(m.help.ShortHelpView(m.ShortHelp()))
	return fitHeight(b.String(), m.Height)
}

// helpView is the help overlay, h lines high.
func (m Model) helpView(h int) string {
	help := m.help
	help.ShowAll = true
	h = max(1, h)
	return lipgloss.NewStyle().Height(h).MaxHeight(h).Render(
		m.Styles.Header.Render("keys") + "  (any key closes)\n\n" + help.View(m))
}

// ShortHelp is the help line: the diff view's keys while it is open, else
// the dashboard's.
func (m Model) ShortHelp() []key.Binding {
	if m.diff.Active() {
		return m.diff.ShortHelp()
	}
	return m.KeyMap.ShortHelp()
}

// FullHelp is the help overlay: every key of the dashboard, the panes'
// among them.
func (m Model) FullHelp() [][]key.Binding { return m.KeyMap.FullHelp() }

// bodyHeight is what the header, the status and the help line leave.
func (m Model) bodyHeight() int { return max(2, m.Height-2-m.statusHeight()) }

// maxStatusLines bounds a status that wraps: a message says what was
// wrong and what to do, and the part that says what to do comes last.
const maxStatusLines = 3

// statusHeight is the lines the status takes at the screen's width.
func (m Model) statusHeight() int {
	if m.Width <= 0 || m.prompt.Active() {
		return 1
	}
	return min(maxStatusLines, max(1, lipgloss.Height(m.statusLine())))
}

func (m Model) statusLine() string {
	if m.prompt.Active() {
		return m.prompt.View()
	}
	if !m.loaded && m.status == "" {
		return m.Styles.Status.Render("loading sessions…")
	}
	line := m.status
	if line == "" && m.priceNote != "" {
		line = m.priceNote
	}
	if m.hasRunning() {
		line = spinnerFrames[m.frame%len(spinnerFrames)] + " " + line
	}
	style := m.Styles.Status
	if m.statusErr {
		style = m.Styles.StatusError
	}
	// Wrapped, not cut: at most maxStatusLines lines.
	lines := strings.Split(ansi.Wrap(style.Render(line), max(1, m.Width), ""), "\n")
	return strings.Join(lines[:min(len(lines), maxStatusLines)], "\n")
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

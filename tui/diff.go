package tui

import (
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/tui/diffview"
)

// openDiff opens the diff view on session s and loads its diff off the
// UI goroutine.
func (m *Model) openDiff(s *record.Session) tea.Cmd {
	seq := m.diff.Open(s)
	m.layout()
	return diffview.Load(m.ctx, m.opt.Sessions, s.ID, seq, colourful())
}

// colourful says whether the diff is coloured: git's colours are kept
// when the dashboard draws in colour, and none are asked for without
// (NO_COLOR, a dumb terminal, the tests' ASCII profile).
func colourful() bool { return lipgloss.ColorProfile() != termenv.Ascii }

package prompt

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// A pasted traceback reaches the agent as it was copied, lines and tabs
// kept (as inject sends it), without the terminal's colour codes or a
// stray "[31m" left of them; the field shows it on its one line with no
// raw control character.
func TestAPasteKeepsItsLinesAndDropsEscapes(t *testing.T) {
	var in input
	in.Update(tea.KeyMsg{Type: tea.KeyRunes, Paste: true,
		Runes: []rune("Traceback (most recent call last):\r\n  File \"x.py\", line 1\n\x1b[31mValueError\x1b[0m:\tbad\x07\x1b]0;title\x07\x1b]8;;http://x\x1b\\")})
	want := "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError:\tbad"
	if got := in.Value(); got != want {
		t.Errorf("value %q, want %q", got, want)
	}
	view := in.View(200, lipgloss.NewStyle())
	if strings.ContainsAny(view, "\x1b\x07\r\n\t") || !strings.Contains(view, "call last):⏎  File") {
		t.Errorf("view %q", view)
	}
}

package prompt

import (
	"strings"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/mattn/go-runewidth"
)

// input is a one-line text field: typing, pasting, moving and deleting by
// character or word. It is the dashboard's own rather than bubbles'
// textinput, whose clipboard package looks for clipboard programs on PATH
// when any zwarm command starts, for a feature the dashboard does not use.
type input struct {
	value []rune
	pos   int
}

func (in *input) SetValue(s string) {
	in.value = []rune(s)
	in.pos = len(in.value)
}

func (in *input) Value() string { return string(in.value) }

// Update applies a key. Keys it does not know are ignored.
func (in *input) Update(k tea.KeyMsg) {
	switch k.Type {
	case tea.KeyRunes, tea.KeySpace:
		r := k.Runes
		if k.Type == tea.KeySpace {
			r = []rune{' '}
		}
		in.insert(r)
	case tea.KeyBackspace, tea.KeyCtrlH:
		if in.pos > 0 {
			in.value = append(in.value[:in.pos-1], in.value[in.pos:]...)
			in.pos--
		}
	case tea.KeyDelete, tea.KeyCtrlD:
		if in.pos < len(in.value) {
			in.value = append(in.value[:in.pos], in.value[in.pos+1:]...)
		}
	case tea.KeyLeft, tea.KeyCtrlB:
		in.pos = max(0, in.pos-1)
	case tea.KeyRight, tea.KeyCtrlF:
		in.pos = min(len(in.value), in.pos+1)
	case tea.KeyHome, tea.KeyCtrlA:
		in.pos = 0
	case tea.KeyEnd, tea.KeyCtrlE:
		in.pos = len(in.value)
	case tea.KeyCtrlU:
		in.value = append([]rune{}, in.value[in.pos:]...)
		in.pos = 0
	case tea.KeyCtrlK:
		in.value = in.value[:in.pos]
	case tea.KeyCtrlW:
		start := in.pos
		for start > 0 && unicode.IsSpace(in.value[start-1]) {
			start--
		}
		for start > 0 && !unicode.IsSpace(in.value[start-1]) {
			start--
		}
		in.value = append(in.value[:start], in.value[in.pos:]...)
		in.pos = start
	}
}

// insert types runes at the cursor. Control characters (a pasted newline,
// an escape sequence) become spaces: the field is one line of text.
func (in *input) insert(r []rune) {
	clean := make([]rune, 0, len(r))
	for _, c := range r {
		if unicode.IsControl(c) {
			c = ' '
		}
		clean = append(clean, c)
	}
	tail := append(clean, in.value[in.pos:]...)
	in.value = append(in.value[:in.pos], tail...)
	in.pos += len(clean)
}

// View shows the field in width cells, scrolled so the cursor is visible;
// the cursor is the reversed cell.
func (in *input) View(width int, cursor lipgloss.Style) string {
	width = max(1, width)
	// Start far enough left that the cursor cell fits.
	start := 0
	for start < in.pos && runewidth.StringWidth(string(in.value[start:in.pos]))+1 > width {
		start++
	}
	var b strings.Builder
	used := 0
	for i := start; i <= len(in.value); i++ {
		ch := " "
		if i < len(in.value) {
			ch = string(in.value[i])
		}
		cw := runewidth.StringWidth(ch)
		if used+cw > width {
			break
		}
		if i == in.pos {
			b.WriteString(cursor.Render(ch))
		} else {
			b.WriteString(ch)
		}
		used += cw
	}
	return b.String()
}

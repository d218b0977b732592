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

// insert types runes at the cursor. A paste keeps its lines and tabs (a
// traceback reaches the agent as it was copied, as inject sends it); its
// other control characters, and the escape sequences they start (a
// terminal's colours), are dropped, and CR LF is one line break.
func (in *input) insert(r []rune) {
	clean := make([]rune, 0, len(r))
	for i := 0; i < len(r); i++ {
		switch c := r[i]; {
		case c == '\r':
			if i+1 < len(r) && r[i+1] == '\n' {
				continue
			}
			clean = append(clean, '\n')
		case c == '\n' || c == '\t':
			clean = append(clean, c)
		case c == 0x1b:
			i = escapeEnd(r, i)
		case !unicode.IsControl(c):
			clean = append(clean, c)
		}
	}
	tail := append(clean, in.value[in.pos:]...)
	in.value = append(in.value[:in.pos], tail...)
	in.pos += len(clean)
}

// escapeEnd is the index of the last rune of the escape sequence that
// starts at r[i] (ESC): a CSI's final byte, an OSC's BEL or ST (a title,
// a link), or the one rune after ESC.
func escapeEnd(r []rune, i int) int {
	if i+1 >= len(r) {
		return i
	}
	switch r[i+1] {
	case '[':
		for j := i + 2; j < len(r); j++ {
			if r[j] >= 0x40 && r[j] <= 0x7e {
				return j
			}
		}
	case ']':
		for j := i + 2; j < len(r); j++ {
			if r[j] == 0x07 {
				return j
			}
			if r[j] == 0x1b && j+1 < len(r) && r[j+1] == '\\' {
				return j + 1
			}
		}
	default:
		return i + 1
	}
	return len(r) - 1
}

// shown is how a rune of the field shows on its one line.
func shown(c rune) string {
	switch c {
	case '\n':
		return "⏎"
	case '\t':
		return " "
	}
	return string(c)
}

// View shows the field in width cells, scrolled so the cursor is visible;
// the cursor is the reversed cell.
func (in *input) View(width int, cursor lipgloss.Style) string {
	width = max(1, width)
	// Start far enough left that the cursor cell fits.
	start := 0
	for start < in.pos && fieldWidth(in.value[start:in.pos])+1 > width {
		start++
	}
	var b strings.Builder
	used := 0
	for i := start; i <= len(in.value); i++ {
		ch := " "
		if i < len(in.value) {
			ch = shown(in.value[i])
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

func fieldWidth(rs []rune) int {
	w := 0
	for _, c := range rs {
		w += runewidth.StringWidth(shown(c))
	}
	return w
}

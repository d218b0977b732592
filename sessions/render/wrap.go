package render

import (
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// Wrap breaks text after indent into pieces at most width cells wide, at
// spaces where it can; the pieces after the first hang under the text, so
// a long error message keeps its end (an install hint, say) on screen. A
// width of 0 or less does not wrap: the one piece is indent and text.
func Wrap(text, indent string, width int) []string {
	if width <= 0 || runewidth.StringWidth(indent+text) <= width {
		return []string{indent + text}
	}
	hang := indent + "  "
	if runewidth.StringWidth(hang) > width/2 {
		hang = ""
	}
	var out []string
	prefix := indent
	for text != "" {
		avail := max(1, width-runewidth.StringWidth(prefix))
		// Measured in a window, not the whole rest: a line of megabytes
		// (a pasted file as a task) is wrapped in one pass, not one a line.
		win := window(text, avail)
		if len(win) == len(text) && runewidth.StringWidth(text) <= avail {
			out = append(out, prefix+text)
			break
		}
		cut := runewidth.Truncate(win, avail, "")
		if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
			cut = cut[:i+1]
		}
		if cut == "" { // a rune wider than the width
			_, size := utf8.DecodeRuneInString(text)
			cut = text[:size]
		}
		out = append(out, strings.TrimRight(prefix+cut, " "))
		text = strings.TrimLeft(text[len(cut):], " ")
		prefix = hang
	}
	return out
}

// window is the start of text that can hold all a line of avail columns
// takes: 16 bytes a column, more than any but a run of combining marks
// needs (such a line is cut shorter, never wider).
func window(text string, avail int) string {
	n := 16*avail + 16
	if len(text) <= n {
		return text
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n]
}

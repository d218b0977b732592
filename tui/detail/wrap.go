package detail

import (
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
	"github.com/zwarm/zwarm/sessions/render"
)

// wrap breaks a line into pieces at most width cells wide, at spaces where
// it can; the pieces after the first are indented under the text, so a
// long error message keeps its end (an install hint, say) on screen.
func wrap(l render.Line, width int) []string {
	indent := strings.Repeat("  ", l.Indent)
	text := indent + l.Text
	if width <= 0 || runewidth.StringWidth(text) <= width {
		return []string{text}
	}
	hang := indent + "  "
	if runewidth.StringWidth(hang) > width/2 {
		hang = ""
	}
	var out []string
	rest, prefix := l.Text, indent
	for rest != "" {
		avail := max(1, width-runewidth.StringWidth(prefix))
		if runewidth.StringWidth(rest) <= avail {
			out = append(out, prefix+rest)
			break
		}
		cut := runewidth.Truncate(rest, avail, "")
		if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
			cut = cut[:i+1]
		}
		if cut == "" { // a rune wider than the pane
			_, size := utf8.DecodeRuneInString(rest)
			cut = rest[:size]
		}
		out = append(out, strings.TrimRight(prefix+cut, " "))
		rest = strings.TrimLeft(rest[len(cut):], " ")
		prefix = hang
	}
	return out
}

package diffview

import (
	"strings"

	"github.com/mattn/go-runewidth"
	"github.com/zwarm/zwarm/sessions/render"
)

// maxCols bounds a line as the view keeps it: a minified file's one-line
// change would otherwise be measured and cut on every frame.
const maxCols = 1000

// displayLines turns git's output into lines that are safe on a terminal.
// A diff shows what a worker wrote, so every control character is escaped
// (render.Safe); with color, the lines are then coloured by the diff's
// grammar (render.DiffPainter); tabs are expanded, so a line's width is
// what it looks like.
func displayLines(out []byte, color bool) []string {
	text := strings.TrimRight(string(out), "\n")
	if text == "" {
		return nil
	}
	var paint *render.DiffPainter
	if color {
		paint = &render.DiffPainter{}
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = safeLine(l, paint)
	}
	return lines
}

// safeLine is one line of git's output made safe, then painted by paint
// if it is not nil: see displayLines.
func safeLine(l string, paint *render.DiffPainter) string {
	l = render.Safe(l)
	if paint != nil {
		l = paint.Paint(l)
	}
	// What is left of ESC starts a colour sequence, which takes no width.
	var w lineWriter
	for l != "" && !w.full {
		if n := render.SGRLen(l); n > 0 {
			w.b.WriteString(l[:n])
			w.coloured = true
			l = l[n:]
			continue
		}
		end := len(l)
		if i := strings.IndexByte(l[1:], 0x1b); i >= 0 {
			end = i + 1
		}
		w.text(l[:end])
		l = l[end:]
	}
	if w.coloured {
		// Nothing a line leaves open bleeds into the next, or into the
		// rest of the screen's line as it is erased.
		w.b.WriteString("\x1b[m")
	}
	return w.b.String()
}

// lineWriter writes a line's text, expanding tabs to the next multiple of
// 8 columns and ending the line with … at maxCols.
type lineWriter struct {
	b        strings.Builder
	col      int
	full     bool
	coloured bool
}

func (w *lineWriter) text(s string) {
	for _, r := range s {
		if w.full {
			return
		}
		n, piece := runewidth.RuneWidth(r), ""
		if r == '\t' {
			n = 8 - w.col%8
			piece = "        "[:n]
		}
		if w.col+n > maxCols {
			w.b.WriteString("…")
			w.full = true
			return
		}
		if piece == "" {
			w.b.WriteRune(r)
		} else {
			w.b.WriteString(piece)
		}
		w.col += n
	}
}

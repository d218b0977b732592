package diffview

import (
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/render"
)

func TestSafeLine(t *testing.T) {
	for _, c := range []struct {
		name, in string
		color    bool
		want     string
	}{
		{"plain", "+const Rate = 20", false, "+const Rate = 20"},
		{"coloured by its grammar", "+x", true, "\x1b[32m+x\x1b[m\x1b[m"},
		{"a worker's colours escaped without colour", "+\x1b[32mx\x1b[m", false, `+\x1b[32mx\x1b[m`},
		{"a worker's colours escaped with colour", "+a\x1b[8mb\x1b[2J\x1b]0;t\x07", true, "\x1b[32m+a\\x1b[8mb\\x1b[2J\\x1b]0;t\\x07\x1b[m\x1b[m"},
		{"an escape cut short", "+a\x1b[3", false, `+a\x1b[3`},
		{"C1 and bidi", "+\u009b1m\u202e", false, `+\x9b1m\u202e`},
		{"CR shown", "+a\r", false, `+a\x0d`},
		{"tabs expanded", "+\tb", false, "+       b"},
		{"tabs after colour count what shows", "+\tb", true, "\x1b[32m+       b\x1b[m\x1b[m"},
		{"bad UTF-8", "+\xff", false, "+\ufffd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var paint *render.DiffPainter
			if c.color {
				paint = &render.DiffPainter{}
			}
			if got := safeLine(c.in, paint); got != c.want {
				t.Errorf("safeLine(%q, %v) = %q, want %q", c.in, c.color, got, c.want)
			}
		})
	}
}

// A line far wider than any terminal is cut, colour closed.
func TestSafeLineCutsAHugeLine(t *testing.T) {
	got := safeLine("+"+strings.Repeat("x", 5*maxCols), &render.DiffPainter{})
	if want := "\x1b[32m+" + strings.Repeat("x", maxCols-1) + "…\x1b[m"; got != want {
		t.Fatalf("got %d bytes ending %q", len(got), got[len(got)-12:])
	}
}

func TestDisplayLines(t *testing.T) {
	if got := displayLines(nil, false); got != nil {
		t.Fatalf("nothing became %q", got)
	}
	got := displayLines([]byte("a\n\nb\n"), false)
	if strings.Join(got, "|") != "a||b" {
		t.Fatalf("lines %q", got)
	}
}

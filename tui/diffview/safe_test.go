package diffview

import (
	"strings"
	"testing"
)

func TestSafeLine(t *testing.T) {
	for _, c := range []struct {
		name, in string
		keepSGR  bool
		want     string
	}{
		{"plain", "+const Rate = 20", false, "+const Rate = 20"},
		{"colours dropped without colour", "\x1b[32m+x\x1b[m", false, `\x1b[32m+x\x1b[m`},
		{"colours kept with colour", "\x1b[1;32m+x\x1b[m", true, "\x1b[1;32m+x\x1b[m\x1b[m"},
		{"other escapes escaped with colour", "\x1b[32m+a\x1b[2Jb\x1b]0;t\x07\x1b[m", true, "\x1b[32m+a\\x1b[2Jb\\x1b]0;t\\x07\x1b[m\x1b[m"},
		{"an escape cut short", "+a\x1b[3", true, `+a\x1b[3`},
		{"C1 and bidi", "+\u009b1m\u202e", false, `+\x9b1m\u202e`},
		{"CR shown", "+a\r", false, `+a\x0d`},
		{"tabs expanded", "+\tb", false, "+       b"},
		{"tabs after colour count what shows", "\x1b[32m+\tb", true, "\x1b[32m+       b\x1b[m"},
		{"bad UTF-8", "+\xff", false, "+\ufffd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := safeLine(c.in, c.keepSGR); got != c.want {
				t.Errorf("safeLine(%q, %v) = %q, want %q", c.in, c.keepSGR, got, c.want)
			}
		})
	}
}

// A line far wider than any terminal is cut, colour closed.
func TestSafeLineCutsAHugeLine(t *testing.T) {
	got := safeLine("\x1b[32m+"+strings.Repeat("x", 5*maxCols), true)
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

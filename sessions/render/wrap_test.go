package render

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
)

func TestWrap(t *testing.T) {
	cases := []struct {
		text, indent string
		width        int
		want         []string
	}{
		{"short", "  ", 20, []string{"  short"}},
		{"not wrapped at all", "  ", 0, []string{"  not wrapped at all"}},
		// At spaces, the rest hanging two cells under the text.
		{"install it with npm i -g tool", "  ", 16, []string{"  install it", "    with npm i", "    -g tool"}},
		// No space in the second half: cut where the width ends.
		{"abcdefghijklmnop", "", 6, []string{"abcdef", "  ghij", "  klmn", "  op"}},
		// An indent wider than half the width: no hang.
		{"one two three", "      ", 10, []string{"      one", "two three"}},
		// A rune wider than the width still moves on.
		{"日本", "", 1, []string{"日", "本"}},
	}
	for _, c := range cases {
		got := Wrap(c.text, c.indent, c.width)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Wrap(%q, %q, %d) = %q, want %q", c.text, c.indent, c.width, got, c.want)
		}
		for _, piece := range got {
			if c.width > 1 && runewidth.StringWidth(piece) > c.width {
				t.Errorf("Wrap(%q, %q, %d): %q is wider", c.text, c.indent, c.width, piece)
			}
		}
	}
}

// A line of megabytes (a file pasted as a task) wraps as a short one
// does, piece for piece: every piece but the last fills the width, and
// together they are the line.
func TestWrapAHugeLine(t *testing.T) {
	word := "wörd 日本 "
	text := strings.Repeat(word, 100_000)
	got := Wrap(text, "", 80)
	var joined strings.Builder
	for i, piece := range got {
		if w := runewidth.StringWidth(piece); w > 80 || i > 0 && i < len(got)-1 && w < 80-2-len("wörd") {
			t.Fatalf("piece %d is %d wide: %q", i, w, piece)
		}
		joined.WriteString(strings.TrimPrefix(piece, "  "))
	}
	if strings.ReplaceAll(joined.String(), " ", "") != strings.ReplaceAll(text, " ", "") {
		t.Fatal("the pieces do not make the line")
	}
}

// BenchmarkWrapHugeLine is what the dashboard pays to show a task of 1 MB
// pasted from a file: one pass over it, not one a line.
func BenchmarkWrapHugeLine(b *testing.B) {
	text := strings.Repeat("x", 1<<20)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Wrap(text, "", 120)
	}
}

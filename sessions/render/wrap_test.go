package render

import (
	"reflect"
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

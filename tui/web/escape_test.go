package web

import (
	"os"
	"regexp"
	"testing"
	"unicode/utf16"

	"github.com/zwarm/zwarm/sessions/render"
)

// The page escapes agent text in the browser with its own pattern; it must
// escape what a terminal escapes (render.Safe), no more and no less, or a
// name that the terminal shows as "rm\u200b -rf" would read on the page
// as "rm -rf".
func TestThePageEscapesWhatTheTerminalEscapes(t *testing.T) {
	js, err := os.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`const unshowable = /(\[[^\]]+\])/gu;`).FindSubmatch(js)
	if m == nil {
		t.Fatal("app.js has no `const unshowable = /[...]/gu;` to compare")
	}
	// JavaScript's \uXXXX and \u{X...} (with the u flag) are Go's
	// \x{XXXX}; the rest of the class reads the same in both.
	class := regexp.MustCompile(`\\u\{([0-9a-fA-F]+)\}`).ReplaceAllString(string(m[1]), `\x{$1}`)
	class = regexp.MustCompile(`\\u([0-9a-fA-F]{4})`).ReplaceAllString(class, `\x{$1}`)
	page := regexp.MustCompile(class)
	// With the u flag the page's pattern sees code points: every one is
	// compared, the tag characters' plane included.
	for r := rune(0); r <= 0xe00ff; r++ {
		if utf16.IsSurrogate(r) {
			continue
		}
		s := string(r)
		terminal := render.Safe(s) != s && r != 0xfffd
		if onPage := page.MatchString(s); onPage != terminal {
			t.Errorf("%U: escaped on the page %v, on a terminal %v", r, onPage, terminal)
		}
	}
	if t.Failed() {
		t.Log("app.js's unshowable and render's unsafeRune must name the same characters")
	}
}

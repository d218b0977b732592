package codex

import (
	"encoding/json"
	"strings"
	"testing"
)

var stringSeeds = []string{
	``, `plain`, `tab\there`, `\"\\\/\b\f\n\r\t`, `\u0000\u001f\u00e9\u2615\uffff`, `\ud83d\ude00`,
	`\ud800`, `\udc00`, `\udc00\ud800`, `\ud800\u0041`, `\ud800\ud800\udc00`, `\ud800\\`, "\xff", "a\xc3", "\xed\xa0\x80",
	"\xef\xbf\xbd", `\ufffd`, "caf\xc3\xa9 \xe2\x98\x95",
}

// FuzzText: a JSON string decodes to what encoding/json gives, through
// text, writeText and unquote, and without their checks of UTF-8 when the
// string may be in a line read strictly (see scanner.start).
func FuzzText(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lit := `"` + s + `"`
		var want string
		if !json.Valid([]byte(lit)) || json.Unmarshal([]byte(lit), &want) != nil {
			return
		}
		if got := text([]byte(lit)); got != want {
			t.Fatalf("text(%q) = %q, want %q", lit, got, want)
		}
		if got := unquote(s); got != want {
			t.Fatalf("unquote(%q) = %q, want %q", s, got, want)
		}
		for _, valid := range []bool{false, true} {
			if valid && !strictlyValid([]byte(lit)) {
				continue
			}
			if got := decode([]byte(lit), valid); got != want {
				t.Fatalf("decode(%q, %v) = %q, want %q", lit, valid, got, want)
			}
			var b strings.Builder
			if writeText(&b, []byte(lit), valid); b.String() != want {
				t.Fatalf("writeText(%q, %v) = %q, want %q", lit, valid, b.String(), want)
			}
		}
	})
}

// strictlyValid reports whether b is one JSON value as a scanner that
// starts a line strictly reads it.
func strictlyValid(b []byte) bool {
	var s scanner
	s.start(b, true)
	s.skip()
	return s.done()
}

func TestText(t *testing.T) {
	for _, s := range stringSeeds {
		lit := `"` + s + `"`
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		if got := text([]byte(lit)); got != want {
			t.Errorf("text(%s) = %q, want %q", lit, got, want)
		}
		if got := decode([]byte(lit), true); strictlyValid([]byte(lit)) && got != want {
			t.Errorf("decode(%s, true) = %q, want %q", lit, got, want)
		}
	}
}

// FuzzValidJSON: a line is valid JSON exactly when encoding/json says so,
// and read strictly only if so.
func FuzzValidJSON(f *testing.F) {
	for _, s := range trickyLines {
		if len(s) < 1000 { // big seeds make the fuzzer crawl
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := new(scanner).valid(b), json.Valid(b); got != want {
			t.Fatalf("valid(%q) = %v, encoding/json says %v", b, got, want)
		}
		if strictlyValid(b) && !json.Valid(b) {
			t.Fatalf("%q is strictly valid, encoding/json says it is not", b)
		}
	})
}

package jsonscan

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
// string may be in a line read strictly (see Scanner.start).
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
		if got := Text([]byte(lit)); got != want {
			t.Fatalf("Text(%q) = %q, want %q", lit, got, want)
		}
		if got := Unquote(s); got != want {
			t.Fatalf("Unquote(%q) = %q, want %q", s, got, want)
		}
		for _, valid := range []bool{false, true} {
			if valid && !strictlyValid([]byte(lit)) {
				continue
			}
			if got := Decode([]byte(lit), valid); got != want {
				t.Fatalf("Decode(%q, %v) = %q, want %q", lit, valid, got, want)
			}
			var b strings.Builder
			if WriteText(&b, []byte(lit), valid); b.String() != want {
				t.Fatalf("WriteText(%q, %v) = %q, want %q", lit, valid, b.String(), want)
			}
		}
	})
}

// strictlyValid reports whether b is one JSON value as a Scanner that
// starts a line strictly reads it.
func strictlyValid(b []byte) bool {
	var s Scanner
	s.Start(b, true)
	s.Skip()
	return s.Done()
}

func TestText(t *testing.T) {
	for _, s := range stringSeeds {
		lit := `"` + s + `"`
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		if got := Text([]byte(lit)); got != want {
			t.Errorf("Text(%s) = %q, want %q", lit, got, want)
		}
		if got := Decode([]byte(lit), true); strictlyValid([]byte(lit)) && got != want {
			t.Errorf("Decode(%s, true) = %q, want %q", lit, got, want)
		}
	}
}

var validitySeeds = []string{
	`{"type":"item.completed","item":{"id":"i","text":"tab\there \u00e9 \ud83d\ude00"}}`,
	`{"a":[1,-0.5e+3,true,false,null,{"b":{}}],"a":"dup"}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}",
	`{"a":1,}`, `[1 2]`, `{"a":01}`, ` {"a" : "b" } `, `"just a string"`, `{}x`,
}

// FuzzValidJSON: a line is valid JSON exactly when encoding/json says so,
// and read strictly only if so.
func FuzzValidJSON(f *testing.F) {
	for _, s := range validitySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := new(Scanner).Valid(b), json.Valid(b); got != want {
			t.Fatalf("valid(%q) = %v, encoding/json says %v", b, got, want)
		}
		if strictlyValid(b) && !json.Valid(b) {
			t.Fatalf("%q is strictly valid, encoding/json says it is not", b)
		}
	})
}

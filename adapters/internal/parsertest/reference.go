package parsertest

import (
	"bytes"
	"encoding/json"
	"github.com/zwarm/zwarm/sessions/record"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A Pair is a parser and the encoding/json reference parser it replaced,
// both having read the same lines.
type Pair interface {
	// Compare parses line with both and returns their events, made
	// comparable: to the reference's events it applies what the parser
	// does differently on purpose. Both slices stay valid after the next
	// call.
	Compare(line []byte) (got, want []record.Event)
	// Clone returns a pair in the same state, so that a line can be tried
	// without changing this one. A pair of stateless parsers may return
	// itself.
	Clone() Pair
}

// Reference describes the differential test of one adapter's parser
// against its reference.
type Reference struct {
	New func() Pair // a pair that has read nothing
	// Cuts is how many places of a line (about) its mutations cut it at
	// and change a byte of.
	Cuts int
	// Setup are lines read before each of Tricky: the calls their tool
	// results refer to, say.
	Setup []string
	// Tricky are lines that exercise the decoding rules: escapes,
	// surrogates, invalid UTF-8, duplicate keys, null, fields of the wrong
	// type, numbers that do not fit, nesting, whitespace.
	Tricky []string
}

// maxMutated is the longest tricky line whose mutations are tried: the
// longer ones test nesting, whole.
const maxMutated = 4096

// MatchesReference checks that the parser gives the events its reference
// gives: line after line of each testdata/*.jsonl of the package, and on
// every mutation of each line (after the lines before it), then on the
// tricky lines and their mutations (after the setup lines). It fails if
// fewer than 10,000 lines gave events to compare.
func MatchesReference(t *testing.T, r Reference) {
	t.Helper()
	n := 0
	check := func(p Pair, line string) {
		t.Helper()
		got, want := p.Compare([]byte(line))
		if len(got)+len(want) == 0 {
			return
		}
		n++
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("line %q:\n got %s\nwant %s", line, g, w)
		}
	}
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := r.New()
		for _, l := range strings.Split(string(data), "\n") {
			for _, m := range mutations(l, r.Cuts) {
				check(p.Clone(), m)
			}
			check(p, l)
		}
	}
	p := r.New()
	for _, l := range r.Setup {
		check(p, l)
	}
	for _, l := range r.Tricky {
		check(p.Clone(), l)
		if len(l) < maxMutated {
			for _, m := range mutations(l, r.Cuts) {
				check(p.Clone(), m)
			}
		}
	}
	if n < 10000 {
		t.Fatalf("only %d lines compared", n)
	}
}

// FuzzMatchesReference is MatchesReference on fuzzed lines, each read
// after the setup lines, seeded with the tricky lines shorter than
// maxSeed. A line with a key other than lower-case ASCII is skipped: such
// a key may match a field only case-insensitively, which encoding/json
// did and the parsers do not.
func FuzzMatchesReference(f *testing.F, r Reference) {
	for _, l := range r.Tricky {
		if len(l) < maxSeed {
			f.Add([]byte(l))
		}
	}
	p0 := r.New()
	for _, l := range r.Setup {
		p0.Compare([]byte(l))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if foldableKeys(b) {
			return
		}
		if got, want := p0.Clone().Compare(b); len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("line %q:\n got %+v\nwant %+v", b, got, want)
		}
	})
}

// mutations are line cut short and with single bytes replaced, at about
// cuts places.
func mutations(line string, cuts int) []string {
	var out []string
	step := max(1, len(line)/cuts)
	for i := 0; i < len(line); i += step {
		out = append(out, line[:i])
		for _, c := range []byte{'"', '\\', 'x', '1', '}', ']', ',', 0xff, '\t', 'n'} {
			b := []byte(line)
			b[i] = c
			out = append(out, string(b))
		}
	}
	return out
}

// foldableKeys reports whether b is JSON with an object key that is not
// lower-case ASCII. It reads every key, the first of duplicates too.
func foldableKeys(b []byte) bool {
	if !json.Valid(b) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type level struct{ object, key bool } // key: a key comes next
	var stack []level
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if top := len(stack) - 1; top >= 0 && stack[top].object {
			if k, ok := tok.(string); ok && stack[top].key &&
				strings.IndexFunc(k, func(r rune) bool { return r > 0x7f || (r >= 'A' && r <= 'Z') }) >= 0 {
				return true
			}
			stack[top].key = !stack[top].key
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, level{object: d == '{', key: true})
		}
	}
}

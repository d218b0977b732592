package parsertest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Goldens checks every testdata/*.jsonl of the package under test against
// its .golden file, fed whole, line by line, in odd-sized chunks and from
// a reused buffer to a fresh parser from newParser (sessionstest.Goldens). go test -update
// rewrites the goldens first.
func Goldens[P agent.Parser](t *testing.T, newParser func() P) {
	sessionstest.Goldens(t, func() agent.Parser { return newParser() }, *update)
}

// Typed fails t for every line on which p makes an event without a type.
// The lines go to p one after the other, so its state carries over.
func Typed(t *testing.T, p agent.Parser, lines []string) {
	t.Helper()
	for _, in := range lines {
		for _, ev := range p.ParseLine([]byte(in)) {
			if ev.Type == "" {
				t.Errorf("%q: event without a type", in)
			}
		}
	}
}

// maxSeed is the longest line given the fuzzer as a seed: big seeds make
// it crawl.
const maxSeed = 1000

// FuzzParseLine fuzzes p, one parser for all the lines (so that whatever
// state one line leaves, the next meets it): whatever the line, it neither
// panics nor makes an event without a type. The seeds are every line of
// the package's testdata/*.jsonl and the lines of extra shorter than
// maxSeed.
func FuzzParseLine(f *testing.F, p agent.Parser, extra []string) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, name := range files {
		data, _ := os.ReadFile(name)
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l)
		}
	}
	for _, l := range extra {
		if len(l) < maxSeed {
			f.Add([]byte(l))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, ev := range p.ParseLine(b) {
			if ev.Type == "" {
				t.Fatalf("event without type from %q", b)
			}
		}
	})
}

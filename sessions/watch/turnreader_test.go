package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
)

// lineParser makes an event of every line, its text the line, so what a
// reader passes on can be compared line for line.
type lineParser struct{ out []record.Event }

func (p *lineParser) ParseLine(line []byte) []record.Event {
	p.out = append(p.out[:0], record.Event{Type: record.EventMessage, Text: string(line)})
	if len(line)%7 == 0 { // some lines make two events, some none
		p.out = append(p.out, record.Event{Type: record.EventReasoning, Text: "and"})
	} else if len(line)%11 == 0 {
		p.out = p.out[:0]
	}
	return p.out
}

// bigTurn writes a turn file past pipelineMin whose last line is left
// unterminated, as a killed agent leaves it.
func bigTurn(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for i := 0; b.Len() < 2*pipelineMin; i++ {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", i%300))
	}
	b.WriteString("the unterminated end")
	path := filepath.Join(t.TempDir(), "turn_1.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readAllEvents(t *testing.T, path string, final bool) ([]record.Event, int64) {
	t.Helper()
	r := NewTurnReader(path, &lineParser{}, 0)
	defer r.Close()
	var out []record.Event
	if err := r.Read(final, func(ev record.Event) { out = append(out, ev) }); err != nil {
		t.Fatal(err)
	}
	return out, r.Offset()
}

// A long stretch is parsed ahead of the caller, and what the caller gets
// is exactly what one goroutine would have given it, in order, down to
// the offset a later reader resumes at.
func TestTurnReaderPipelinedIsTheSame(t *testing.T) {
	t.Parallel()
	if runtime.GOMAXPROCS(0) < 2 {
		t.Fatal("the pipelined reader needs GOMAXPROCS >= 2; run with -cpu 2 or on two cores")
	}
	path := bigTurn(t)
	for _, final := range []bool{false, true} {
		got, gotOff := readAllEvents(t, path, final)
		prev := runtime.GOMAXPROCS(1) // one core: the plain loop
		want, wantOff := readAllEvents(t, path, final)
		runtime.GOMAXPROCS(prev)
		if gotOff != wantOff {
			t.Fatalf("final=%v: offset %d, want %d", final, gotOff, wantOff)
		}
		if len(got) != len(want) || !reflect.DeepEqual(got, want) {
			t.Fatalf("final=%v: %d events, want %d (or they differ)", final, len(got), len(want))
		}
		if last := got[len(got)-1].Text; final != (last == "the unterminated end") {
			t.Fatalf("final=%v: last event %q", final, last)
		}
	}
}

// A caller that gives up half way (here by panicking) does not leave the
// parsing goroutine behind.
func TestTurnReaderPipelinedEndsItsGoroutine(t *testing.T) {
	path := bigTurn(t)
	// The reader stays open until the check: closing its file would end
	// a goroutine left behind by itself, hiding the leak.
	r := NewTurnReader(path, &lineParser{}, 0)
	defer r.Close()
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not come through")
			}
		}()
		n := 0
		r.Read(true, func(record.Event) {
			if n++; n == 1000 {
				panic("enough")
			}
		})
	}()
	// The parsing goroutine by name: a count of all goroutines moves with
	// whatever earlier tests left winding down.
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	if strings.Contains(stacks, "(*TurnReader).readPipelined.func") {
		t.Fatalf("the parsing goroutine outlived the read:\n%s", stacks)
	}
}

// Package sessionstest is what the tests of every package share, as
// net/http/httptest is: waiting for a condition (Eventually), processes
// (Alive, MarkedProcs), records written as zwarm writes them
// (WriteSettledRecord, Fingerprint), and parser goldens fed whole, line by
// line and in odd-sized chunks (Feed), and line by line from one buffer
// overwritten after each (FeedReused), which must all give the same
// events. Its packages are the stand-ins: fakeagent (a scripted agent
// CLI), fakemodel (a scripted model server for the real agent CLIs) and
// testbin (a test binary that serves as zwarm and the fake agent, so that
// no test builds a program).
package sessionstest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
)

// Feed writes data to a turn file the way an agent does, in pieces of
// sizes(i) bytes, and reads it back with a TurnReader after every write, as
// a live reader does. It returns every event parsed.
func Feed(t testing.TB, p agent.Parser, data []byte, sizes func(i int) int) []record.Event {
	t.Helper()
	path := filepath.Join(t.TempDir(), "turn_1.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := watch.NewTurnReader(path, p, 0)
	defer rd.Close()
	var got []record.Event
	collect := func(ev record.Event) { got = append(got, ev) }
	for i := 0; len(data) > 0; i++ {
		n := max(1, min(sizes(i), len(data)))
		if _, err := f.Write(data[:n]); err != nil {
			t.Fatal(err)
		}
		data = data[n:]
		if err := rd.Read(false, collect); err != nil {
			t.Fatal(err)
		}
	}
	if err := rd.Read(true, collect); err != nil {
		t.Fatal(err)
	}
	return got
}

// FeedReused parses data line by line as the supervisor does, each line
// in the same buffer, overwritten once the line is parsed: a parser may
// not keep any part of a line past it (the supervisor recycles the
// buffers of the agent's output), and an event that did would change.
func FeedReused(p agent.Parser, data []byte) []record.Event {
	var got []record.Event
	var buf []byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		buf = append(buf[:0], line...)
		got = append(got, p.ParseLine(agent.ParseableLine(buf))...)
		for i := range buf {
			buf[i] = 0xff
		}
	}
	return got
}

// Encode writes events one JSON object a line, the golden format.
func Encode(t testing.TB, evs []record.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// Goldens checks every testdata/*.jsonl against its .golden file, parsing
// it whole, line by line, in odd chunks and from a reused buffer with a
// fresh parser from newParser each time. With update set it rewrites the goldens first.
func Goldens(t *testing.T, newParser func() agent.Parser, update bool) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no testdata/*.jsonl")
	}
	for _, in := range files {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(in, ".jsonl") + ".golden"
			if update {
				whole := Encode(t, Feed(t, newParser(), data, func(int) int { return len(data) }))
				if err := os.WriteFile(golden, whole, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			lines := bytes.SplitAfter(data, []byte("\n"))
			modes := []struct {
				name  string
				sizes func(int) int
			}{
				{"whole", func(int) int { return len(data) }},
				{"lines", func(i int) int {
					if i < len(lines) {
						return len(lines[i])
					}
					return 1
				}},
				{"chunks", func(i int) int { return []int{1, 3, 7, 13, 64, 2, 511}[i%7] }},
			}
			for _, m := range modes {
				if got := Encode(t, Feed(t, newParser(), data, m.sizes)); !bytes.Equal(got, want) {
					t.Errorf("%s: events differ from %s\n got:\n%s\nwant:\n%s", m.name, golden, got, want)
				}
			}
			if got := Encode(t, FeedReused(newParser(), data)); !bytes.Equal(got, want) {
				t.Errorf("reused: events differ from %s (the parser keeps bytes of a line past it)\n got:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

package parsertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
)

// Quote renders s as a JSON string the way both agents do (codex with
// serde_json, claude with JSON.stringify): only quotes, backslashes and
// control characters are escaped, the rest of UTF-8 is written as is.
func Quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// CommandOutput is what a test run prints: tabs, quotes, colour codes,
// non-ASCII text, n lines of it.
func CommandOutput(i, n int) string {
	var b strings.Builder
	for l := range n {
		switch l % 5 {
		case 0:
			fmt.Fprintf(&b, "=== RUN   TestParse/case_%d_%d\n", i, l)
		case 1:
			fmt.Fprintf(&b, "    parse_test.go:%d: got \"a\\tb\" want \"café ☕\" (line %d)\n", 40+l, l)
		case 2:
			fmt.Fprintf(&b, "--- PASS: TestParse/case_%d_%d (0.00s)\n", i, l)
		case 3:
			fmt.Fprintf(&b, "ok  \tgithub.com/example/project/pkg/p%d\t0.%02ds\n", l, l%100)
		case 4:
			b.WriteString("\x1b[32mPASS\x1b[0m — 12 tests, 0 failures; résumé → naïve 日本語\n")
		}
	}
	return b.String()
}

// BenchParse parses data, a turn file every line of which is valid agent
// output, through a TurnReader with a fresh parser from newParser, as
// readers of a session do. A raw or unknown event means the parser failed.
// Besides the usual metrics it reports MB/cpu-s.
func BenchParse[P agent.Parser](b *testing.B, data []byte, newParser func() P) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "turn_1.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu := cpuTime()
	defer func() {
		// On a shared machine the wall clock also counts other work; the
		// CPU time of this process (GC included) does not.
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/(cpuTime()-cpu).Seconds(), "MB/cpu-s")
	}()
	for b.Loop() {
		n, bad := 0, []record.Event(nil)
		err := watch.ReadTurnFile(path, newParser(), func(ev record.Event) {
			n++
			if ev.Type == record.EventRaw || ev.Type == record.EventUnknown {
				bad = append(bad, ev)
			}
		})
		if err != nil || n == 0 {
			b.Fatalf("%d events, %v", n, err)
		}
		if len(bad) > 0 {
			b.Fatalf("%d of %d events are raw or unknown, first: %+v", len(bad), n, bad[0])
		}
	}
}

// cpuTime is the CPU time this process has used, in all its threads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

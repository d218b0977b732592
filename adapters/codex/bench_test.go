package codex

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

	"github.com/zwarm/zwarm/sessions"
)

// quote renders s as a JSON string the way codex (serde_json) does: only
// quotes, backslashes and control characters are escaped, the rest of
// UTF-8 is written as is.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// commandOutput is what a test run prints: tabs, quotes, colour codes,
// non-ASCII text, n lines of it.
func commandOutput(i, n int) string {
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

// benchTurn is a realistic `codex exec --json` turn file of at least size
// bytes, every line of it valid: reasoning, plans, commands with
// multi-line output, file changes, tool calls, messages, usage.
func benchTurn(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}` + "\n")
	b.WriteString(`{"type":"turn.started"}` + "\n")
	lines := []int{3, 20, 80, 200}
	item := 0
	next := func() string { item++; return fmt.Sprintf("item_%d", item) }
	plan := ""
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `{"type":"item.completed","item":{"id":%q,"type":"reasoning","text":%s}}`+"\n", next(),
			quote(fmt.Sprintf("**Checking step %d**\n\nI’ll run the tests for `pkg/p%d` and look at \"failures\".", i, i)))
		if i%10 == 0 {
			plan = next()
		}
		phase := "updated"
		if i%10 == 0 {
			phase = "started"
		}
		fmt.Fprintf(&b, `{"type":"item.%s","item":{"id":%q,"type":"todo_list","items":[{"text":"inspect the parser","completed":true},{"text":"write the fix for step %d","completed":%v},{"text":"run the tests","completed":false}]}}`+"\n",
			phase, plan, i, i%2 == 0)
		cmd := quote(fmt.Sprintf("/bin/bash -lc 'go test ./pkg/p%d/... -run \"TestParse\"'", i))
		id := next()
		fmt.Fprintf(&b, `{"type":"item.started","item":{"id":%q,"type":"command_execution","command":%s,"aggregated_output":"","exit_code":null,"status":"in_progress"}}`+"\n", id, cmd)
		fmt.Fprintf(&b, `{"type":"item.completed","item":{"id":%q,"type":"command_execution","command":%s,"aggregated_output":%s,"exit_code":%d,"status":"completed"}}`+"\n",
			id, cmd, quote(commandOutput(i, lines[i%len(lines)])), i%3)
		if i%3 == 0 {
			id := next()
			fmt.Fprintf(&b, `{"type":"item.started","item":{"id":%q,"type":"file_change","changes":[{"path":"/home/dev/project/pkg/p%d/parse.go","kind":"update"}],"status":"in_progress"}}`+"\n", id, i)
			fmt.Fprintf(&b, `{"type":"item.completed","item":{"id":%q,"type":"file_change","changes":[{"path":"/home/dev/project/pkg/p%d/parse.go","kind":"update"},{"path":"/home/dev/project/pkg/p%d/parse_test.go","kind":"add"}],"status":"completed"}}`+"\n", id, i, i)
		}
		if i%7 == 0 {
			fmt.Fprintf(&b, `{"type":"item.completed","item":{"id":%q,"type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"flag %d"},"result":{"content":[{"type":"text","text":%s}],"structured_content":null},"error":null,"status":"completed"}}`+"\n",
				next(), i, quote("flag.Bool defines a bool flag.\n\tUsage: flag.Bool(\"v\", false, \"verbose\") — see pflag"))
		}
		fmt.Fprintf(&b, `{"type":"item.completed","item":{"id":%q,"type":"agent_message","text":%s}}`+"\n", next(),
			quote(fmt.Sprintf("Step %d done: the tests pass ✅ and `go vet` is clean.\nNext: step %d.", i, i+1)))
	}
	b.WriteString(`{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"cache_write_input_tokens":0,"output_tokens":122,"reasoning_output_tokens":64}}` + "\n")
	return b.Bytes()
}

// BenchmarkParse100MB parses a 100 MB turn file through a TurnReader, as
// readers of a session do. Every line is valid codex output, so a raw or
// unknown event means the parser failed.
func BenchmarkParse100MB(b *testing.B) {
	data := benchTurn(100 << 20)
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
		n, bad := 0, []sessions.Event(nil)
		err := sessions.ReadTurnFile(path, NewParser(), func(ev sessions.Event) {
			n++
			if ev.Type == sessions.EventRaw || ev.Type == sessions.EventUnknown {
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

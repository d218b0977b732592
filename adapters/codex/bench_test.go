package codex

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/zwarm/zwarm/adapters/internal/parsertest"
)

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
			parsertest.Quote(fmt.Sprintf("**Checking step %d**\n\nI’ll run the tests for `pkg/p%d` and look at \"failures\".", i, i)))
		if i%10 == 0 {
			plan = next()
		}
		phase := "updated"
		if i%10 == 0 {
			phase = "started"
		}
		fmt.Fprintf(&b, `{"type":"item.%s","item":{"id":%q,"type":"todo_list","items":[{"text":"inspect the parser","completed":true},{"text":"write the fix for step %d","completed":%v},{"text":"run the tests","completed":false}]}}`+"\n",
			phase, plan, i, i%2 == 0)
		cmd := parsertest.Quote(fmt.Sprintf("/bin/bash -lc 'go test ./pkg/p%d/... -run \"TestParse\"'", i))
		id := next()
		fmt.Fprintf(&b, `{"type":"item.started","item":{"id":%q,"type":"command_execution","command":%s,"aggregated_output":"","exit_code":null,"status":"in_progress"}}`+"\n", id, cmd)
		fmt.Fprintf(&b, `{"type":"item.completed","item":{"id":%q,"type":"command_execution","command":%s,"aggregated_output":%s,"exit_code":%d,"status":"completed"}}`+"\n",
			id, cmd, parsertest.Quote(parsertest.CommandOutput(i, lines[i%len(lines)])), i%3)
		if i%3 == 0 {
			id := next()
			fmt.Fprintf(&b, `{"type":"item.started","item":{"id":%q,"type":"file_change","changes":[{"path":"/home/dev/project/pkg/p%d/parse.go","kind":"update"}],"status":"in_progress"}}`+"\n", id, i)
			fmt.Fprintf(&b, `{"type":"item.completed","item":{"id":%q,"type":"file_change","changes":[{"path":"/home/dev/project/pkg/p%d/parse.go","kind":"update"},{"path":"/home/dev/project/pkg/p%d/parse_test.go","kind":"add"}],"status":"completed"}}`+"\n", id, i, i)
		}
		if i%7 == 0 {
			fmt.Fprintf(&b, `{"type":"item.completed","item":{"id":%q,"type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"flag %d"},"result":{"content":[{"type":"text","text":%s}],"structured_content":null},"error":null,"status":"completed"}}`+"\n",
				next(), i, parsertest.Quote("flag.Bool defines a bool flag.\n\tUsage: flag.Bool(\"v\", false, \"verbose\") — see pflag"))
		}
		fmt.Fprintf(&b, `{"type":"item.completed","item":{"id":%q,"type":"agent_message","text":%s}}`+"\n", next(),
			parsertest.Quote(fmt.Sprintf("Step %d done: the tests pass ✅ and `go vet` is clean.\nNext: step %d.", i, i+1)))
	}
	b.WriteString(`{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"cache_write_input_tokens":0,"output_tokens":122,"reasoning_output_tokens":64}}` + "\n")
	return b.Bytes()
}

// BenchmarkParse100MB parses a 100 MB turn file through a TurnReader, as
// readers of a session do. Every line is valid codex output, so a raw or
// unknown event means the parser failed.
func BenchmarkParse100MB(b *testing.B) {
	parsertest.BenchParse(b, benchTurn(100<<20), NewParser)
}

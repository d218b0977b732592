package codex

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/adapters/internal/jsonscan"
	"github.com/zwarm/zwarm/adapters/internal/parsertest"
	"github.com/zwarm/zwarm/sessions/record"
)

// trickyLines are valid and invalid lines that exercise the decoding
// rules: escapes, surrogates, invalid UTF-8, duplicate keys, null, fields
// of the wrong type, numbers that do not fit, nesting, whitespace.
var trickyLines = []string{
	`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"tab\there \"q\" \\ \/ \b\f\n\r \u00e9 \u2615 \ud83d\ude00 \u0000 end"}}`,
	`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"lone \ud800 high, lone \udc00 low, swapped \udc00\ud800, high then BMP \ud800\u0041, at end \ud800"}}`,
	`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"bad \xff\xfe bytes \xed\xa0\x80 surrogate \xc3 cut, real \ufffd and ` + "\xef\xbf\xbd" + `"}}`,
	`{"type":"item.completed","item":{"id":"i\xff","type":"reasoning","text":"plain"}}`,
	`{"type":"item.completed","item":{"id":"a","id":"b","type":"web_search","query":"q","query":"last"}}`,
	`{"type":"item.completed","item":{"id":"a","type":"agent_message"},"item":{"text":"merged"}}`,
	`{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"x"},"item":null,"item":{"type":"reasoning"}}`,
	`{"type":"thread.started","type":null,"thread_id":"t"}`,
	`{"type":"turn.started","type":"thread.started","thread_id":null}`,
	`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2},"usage":{"input_tokens":5}}`,
	`{"type":"turn.completed","usage":{"input_tokens":1.5}}`,
	`{"type":"turn.completed","usage":{"input_tokens":1e2}}`,
	`{"type":"turn.completed","usage":{"input_tokens":"1"}}`,
	`{"type":"turn.completed","usage":{"input_tokens":99999999999999999999}}`,
	`{"type":"turn.completed","usage":{"input_tokens":-0,"total_tokens":-7}}`,
	`{"type":"turn.completed","usage":null}`,
	`{"type":"turn.completed","usage":[]}`,
	`{"type":"turn.failed","error":{"message":5}}`,
	`{"type":"turn.failed","error":"boom"}`,
	`{"type":"turn.failed","error":null}`,
	`{"type":"turn.failed","error":{"message":"first"},"error":{"other":1}}`,
	`{"type":"error","message":{"nested":[1,2,{"a":"b"}]}}`,
	`{"type":"error","message":null}`,
	`{"type":"error","message":12.5}`,
	`{"type":"error","message":"Reconnecting... 1/5"}`,
	`{"type":"error","message":"Reconnecting... {\"error\":{\"message\":\"kept\"}}"}`,
	`{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"ls","aggregated_output":"x","exit_code":1.0,"status":"failed"}}`,
	`{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"ls","aggregated_output":"x","exit_code":"1"}}`,
	`{"type":"item.completed","item":{"id":"c","type":"command_execution","exit_code":3,"exit_code":null}}`,
	`{"type":"item.completed","item":{"id":"c","type":"command_execution","exit_code":-2147483649}}`,
	`{"type":"item.completed","item":{"id":"c","type":"command_execution","command":["ls"]}}`,
	`{"type":"item.completed","item":{"id":"f","type":"file_change","changes":[null,{"path":"p"},{"kind":"add"}]}}`,
	`{"type":"item.completed","item":{"id":"f","type":"file_change","changes":[1]}}`,
	`{"type":"item.completed","item":{"id":"f","type":"file_change","changes":{"path":"p"}}}`,
	`{"type":"item.completed","item":{"id":"f","type":"file_change","changes":null}}`,
	`{"type":"item.completed","item":{"id":"f","type":"file_change","changes":[{"path":"a"}],"changes":[{"path":"b","kind":"delete"}]}}`,
	`{"type":"item.completed","item":{"id":"t","type":"todo_list","items":[{"text":"a","completed":true},{"text":"b","completed":null},null]}}`,
	`{"type":"item.completed","item":{"id":"t","type":"todo_list","items":[{"text":"a","completed":"yes"}]}}`,
	`{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"s","tool":"t","arguments":{ "a" : [ 1 , 2 ] },"result":{"content":[{"type":"text","text":"one"},{"type":"image","data":"AA=="},{"type":"text","text":"two"}]},"error":null,"status":"completed"}}`,
	`{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"s","tool":"t","arguments":"str","result":{"content":[],"structured_content":{"k":1}},"status":"completed"}}`,
	`{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"s","tool":"t","result":"plain","error":{"message":"bad\n\nStack backtrace:\n   0: <unknown>"},"status":"failed"}}`,
	`{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"s","tool":"t","result":{"content":[{"type":"text","text":"denied"}]},"error":null,"status":"failed"}}`,
	`{"type":"item.completed","item":{"id":"e","type":"error","message":"","text":"fallback"}}`,
	`{"type":"item.completed","item":{"id":"e","type":"error","message":7}}`,
	`{"type":"item.completed","item":{"type":"\u0061gent_message","text":"escaped type"}}`,
	`{"typ\u0065":"turn.started"}`,
	`{"type":"item.completed"}`,
	`{"type":"item.completed","item":5}`,
	`{"type":"item.completed","item":"x"}`,
	`{"type":7}`,
	`{"type":"some.future.event","data":{"deep":[[[[{}]]]]}}`,
	`{}`, `{ }`, "\t{\"type\":\"turn.started\"}\r", "\u00a0{\"type\":\"turn.started\"}\u00a0",
	`{"type":"turn.started"} `, `{"type":"turn.started"} x`, `{"type":"turn.started"}{}`, `{"type":"turn.started",}`,
	`{"type":"turn.started"`, `{"type":"tu`, `{"type":"turn.started","x":01}`, `{"type":"turn.started","x":1.}`,
	`{"type":"turn.started","x":-}`, `{"type":"turn.started","x":tru}`, `{"type":"turn.started","x":"\q"}`,
	`{"type":"turn.started","x":"\u12"}`, "{\"type\":\"turn.started\",\"x\":\"raw\ttab\"}", `{"type":"turn.started","x":NaN}`,
	`[1,2]`, `null`, `"str"`, `12`, `not json at all`, "\xff\xfe", "", "   ",
	`{"type":"turn.started","x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"type":"turn.started","x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	`{"type":"turn.started","x":"` + strings.Repeat("[", 20000) + `"}`,
}

// reference is the differential test of the parser: stateless, one pair
// of parsers serves every line.
var reference = parsertest.Reference{
	New:    func() parsertest.Pair { return pair{NewParser(), newRefParser()} },
	Cuts:   150,
	Tricky: trickyLines,
}

type pair struct {
	p   *Parser
	ref *refParser
}

func (c pair) Compare(line []byte) (got, want []record.Event) {
	got = append([]record.Event(nil), c.p.ParseLine(line)...)
	want = c.ref.ParseLine(line)
	for i := range want {
		onPurpose(&want[i])
	}
	return got, want
}

func (c pair) Clone() parsertest.Pair { return c }

// TestMatchesEncodingJSON: the parser gives the events the encoding/json
// parser it replaced gave, on every line of the test data, its mutations,
// and trickyLines, but for what it renders differently on purpose: an MCP
// tool call's result and error, and the message of an API error codex
// passes on as its raw body.
func TestMatchesEncodingJSON(t *testing.T) {
	parsertest.MatchesReference(t, reference)
}

// onPurpose applies to an event of the old parser what the new one does
// differently by design.
func onPurpose(ev *record.Event) {
	var s jsonscan.Scanner
	switch {
	case ev.Type == record.EventToolCall && ev.Tool != "web_search":
		// An MCP call: Output was the result as JSON, which still holds
		// everything the new Output is made of.
		ev.Output = mcpResult(&s, []byte(ev.Output))
		ev.Text = trimBacktrace(ev.Text)
		if ev.Text == "" && ev.Status == "failed" {
			ev.Text = ev.Output
		}
	case ev.Type == record.EventError && ev.ItemID == "", ev.Type == record.EventTurnFailed:
		ev.Text = humanError(&s, ev.Text)
	}
}

// TestKeysMatchExactly documents the one rule of encoding/json not kept:
// its case-insensitive match of keys.
func TestKeysMatchExactly(t *testing.T) {
	evs := NewParser().ParseLine([]byte(`{"Type":"turn.started"}`))
	if len(evs) != 1 || evs[0].Type != record.EventUnknown || evs[0].Text != "" {
		t.Fatalf("%+v", evs)
	}
}

// TestEventsAreCopies: no event string shares memory with the line, which
// the caller reuses.
func TestEventsAreCopies(t *testing.T) {
	line := []byte(`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","aggregated_output":"a\nb","exit_code":0,"status":"weird"}}`)
	evs := append([]record.Event(nil), NewParser().ParseLine(line)...)
	for i := range line {
		line[i] = 'X'
	}
	if ev := evs[0]; ev.ItemID != "item_1" || ev.Command != "ls" || ev.Output != "a\nb" || ev.Status != "weird" {
		t.Fatalf("%+v", ev)
	}
	if !bytes.Contains(line, []byte("XXX")) {
		t.Fatal("line not overwritten")
	}
}

// FuzzMatchesEncodingJSON is TestMatchesEncodingJSON on fuzzed lines. A
// line with a key other than lower-case ASCII is skipped: such a key may
// match a field only case-insensitively (TestKeysMatchExactly).
func FuzzMatchesEncodingJSON(f *testing.F) {
	parsertest.FuzzMatchesReference(f, reference)
}

package claude

import (
	"maps"
	"slices"
	"testing"

	"github.com/zwarm/zwarm/adapters/internal/parsertest"
	"github.com/zwarm/zwarm/sessions/record"
)

// setupLines start the calls the tool results of trickyLines refer to.
var setupLines = []string{
	`{"type":"assistant","message":{"id":"m","model":"claude-sonnet-5","content":[{"type":"tool_use","id":"toolu_b","name":"Bash","input":{"command":"ls -l"}},{"type":"tool_use","id":"toolu_w","name":"Write","input":{"file_path":"/p/a.go","content":"x"}}]}}`,
	`{"type":"assistant","message":{"id":"m","model":"claude-sonnet-5","content":[{"type":"tool_use","id":"toolu_n","name":"NotebookEdit","input":{"notebook_path":"/p/n.ipynb"}},{"type":"tool_use","id":"toolu_t","name":"TodoWrite","input":{"todos":[]}},{"type":"tool_use","id":"toolu_g","name":"Grep","input":{"pattern":"x"}}]}}`,
}

// trickyLines exercise the decoding rules: escapes, invalid UTF-8,
// duplicate keys, null, fields of the wrong type (which made a line raw,
// or a user line silent, or were skipped in an assistant line).
var trickyLines = []string{
	`{"type":"system","subtype":"init","session_id":"s\u00e9\ud800","session_id":"last"}`,
	`{"type":"system","subtype":"init","session_id":5}`,
	`{"type":"system","subtype":"compact_boundary"}`,
	`{"type":"system"}`,
	`{"type":"assistant","message":{"model":"m","content":[{"type":"text","text":"a \"b\" \u2615 \ud83d\ude00 \xff"},{"type":"thinking","thinking":"t\nt"},{"type":"image"},5,null,{"type":"text","text":7},{"type":"text","text":"x","text":null}]}}`,
	`{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: 500"}]}}`,
	`{"type":"assistant","message":{"model":"\u003csynthetic\u003e","content":[{"type":"text","text":"escaped model"}]}}`,
	`{"type":"assistant","message":{"content":"plain"}}`,
	`{"type":"assistant","message":{"content":{"type":"text"}}}`,
	`{"type":"assistant","message":{"content":null}}`,
	`{"type":"assistant","message":null}`,
	`{"type":"assistant","message":[]}`,
	`{"type":"assistant","message":{"id":5,"content":[]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u1","name":"Bash","input":{"command":5}},{"type":"tool_use","id":"u2","name":"Bash","input":{"command":"a","command":"b"}},{"type":"tool_use","id":"u3","name":"Edit","input":"str"},{"type":"tool_use","id":"u4","name":"NotebookEdit","input":{"notebook_path":"/n"}}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u5","name":"TodoWrite","input":{"todos":[{"content":"a","status":"completed"},{"content":1,"status":"x"},"str",null,{"status":"completed"}]}},{"type":"tool_use","id":"u6","name":"TodoWrite","input":{"todos":"none"}}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u7","name":"mcp__docs__search","input":{ "q" : [1, 2] }},{"type":"tool_use","id":"u8","name":"Read"},{"type":"tool_use","id":"u9","name":"Read","input":null}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_b","content":"out\twith \"tabs\""}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_b","content":"Exit code 12\nboom","is_error":true}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_b","content":"Exit code x","is_error":true}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_w","content":"denied","is_error":true},{"type":"tool_result","tool_use_id":"toolu_n","content":"ok"}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_t","content":"ok"},{"type":"tool_result","tool_use_id":"toolu_g","content":[{"type":"text","text":"one"},{"type":"image","source":{}},{"type":"text","text":""},{"type":"text","text":"two \u00e9"}]}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_g","content":[{"type":"text","text":5}]}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_g","content":[{"type":"text","text":"only"}]}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_g","content":{"k":[1, 2]}}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_g","content":12}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_g","content":null}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"unknown","content":"?","is_error":true}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_g","is_error":"yes"}]}}`,
	`{"type":"user","message":{"content":[{"type":"text","text":"hi"},{"type":"tool_result","tool_use_id":5}]}}`,
	`{"type":"user","message":{"content":"the prompt"}}`,
	`{"type":"user","message":{"role":"user"}}`,
	`{"type":"user"}`,
	`{"type":"result","subtype":"success","is_error":false,"total_cost_usd":0.5,"usage":{"input_tokens":10,"cache_read_input_tokens":5,"cache_creation_input_tokens":2,"output_tokens":3}}`,
	`{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"result":"API Error: overloaded","usage":{"input_tokens":1}}`,
	`{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["a","b\u00e9",null],"api_error_status":"429"}`,
	`{"type":"result","subtype":"error_max_turns","is_error":true,"result":"","errors":[]}`,
	`{"type":"result","is_error":true,"result":[{"type":"text","text":"from blocks"}],"api_error_status":null}`,
	`{"type":"result","is_error":true,"result":{"x":1}}`,
	`{"type":"result","total_cost_usd":null,"usage":null}`,
	`{"type":"result","total_cost_usd":1e400}`,
	`{"type":"result","num_turns":1.5}`,
	`{"type":"result","is_error":"true"}`,
	`{"type":"result","errors":[1]}`,
	`{"type":"result","errors":"x"}`,
	`{"type":"result","is_error":true,"errors":["a","b"],"errors":[null]}`,
	`{"type":"result","usage":{"input_tokens":1},"usage":{"output_tokens":2}}`,
	`{"type":"result","usage":{"input_tokens":-1e2}}`,
	`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":3,"retry_delay_ms":582.5,"error_status":500,"error":"server_error"}`,
	`{"type":"system","subtype":"api_retry","attempt":"1"}`,
	`{"type":"stream_event","event":{}}`,
	`{"type":5}`, `{}`, `[1]`, `null`, `nope`, "\xff\xfe", "", `{"type":"user"`, "{\"type\":\"user\",\"x\":\"raw\ttab\"}",
}

// reference is the differential test of the parser, which remembers the
// calls of its turn: each line is tried on copies of the parsers that read
// the lines before it.
var reference = parsertest.Reference{
	New:    func() parsertest.Pair { return &pair{NewParser(), newRefParser()} },
	Cuts:   60,
	Setup:  setupLines,
	Tricky: trickyLines,
}

type pair struct {
	p   *Parser
	ref *refParser
}

// Compare parses a line with both parsers and returns their events, made
// comparable by expected.
func (c *pair) Compare(line []byte) (got, want []record.Event) {
	got = expected(c.p.ParseLine(line), false)
	want = expected(c.ref.ParseLine(line), true)
	// The new parser forgets a call once its result came, on purpose: the
	// old one remembers, which only matters to a second result.
	for id := range c.ref.tools {
		if _, ok := c.p.tools[id]; !ok {
			delete(c.ref.tools, id)
		}
	}
	return got, want
}

func (c *pair) Clone() parsertest.Pair { return &pair{c.p.clone(), c.ref.clone()} }

// TestMatchesEncodingJSON: the parser gives the events the encoding/json
// parser it replaced gave, line after line of each test file, on every
// mutation of each line (after the lines before it) and on trickyLines,
// but for what it renders differently on purpose: the task tools, a
// failed turn's result, API retries.
func TestMatchesEncodingJSON(t *testing.T) {
	parsertest.MatchesReference(t, reference)
}

// expected normalizes one line's events for comparison: it drops the task
// tools' events (their own tests cover them) and the error of a failed
// TodoWrite (which the old parser did not show), and of the old parser's
// events it makes what the new one does on purpose: one turn.failed
// carrying the usage of a failed turn instead of turn.failed and
// turn.completed. The text of a retry is new, so only its presence counts.
func expected(evs []record.Event, old bool) []record.Event {
	var out []record.Event
	for _, ev := range evs {
		switch {
		case taskTools[ev.Tool] && (ev.Type == record.EventToolCall || ev.Type == record.EventToolResult),
			ev.Type == record.EventTodoList && ev.ItemID == planItemID,
			!old && ev.Type == record.EventToolResult && ev.Tool == "TodoWrite":
			continue
		case ev.Type == record.EventRetry:
			ev.Text = ""
		case old && ev.Type == record.EventTurnCompleted && len(out) > 0 && out[len(out)-1].Type == record.EventTurnFailed:
			failed := &out[len(out)-1]
			failed.Usage, failed.CostUSD, failed.ProcessCost = ev.Usage, ev.CostUSD, ev.ProcessCost
			continue
		}
		out = append(out, ev)
	}
	return out
}

func (p *Parser) clone() *Parser {
	c := NewParser()
	c.tools = maps.Clone(p.tools)
	c.plan = plan{tasks: slices.Clone(p.plan.tasks), shown: p.plan.shown}
	return c
}

func (p *refParser) clone() *refParser { return &refParser{tools: maps.Clone(p.tools)} }

// TestEventsAreCopies: no event string shares memory with the line, which
// the caller reuses.
func TestEventsAreCopies(t *testing.T) {
	p := NewParser()
	var evs []record.Event
	for _, l := range setupLines[:1] {
		evs = append(evs, p.ParseLine([]byte(l))...)
	}
	line := []byte(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_b","content":"a\nb"}]}}`)
	evs = append(evs, p.ParseLine(line)...)
	for i := range line {
		line[i] = 'X'
	}
	if ev := evs[2]; ev.ItemID != "toolu_b" || ev.Command != "ls -l" || ev.Output != "a\nb" {
		t.Fatalf("%+v", ev)
	}
}

// FuzzMatchesEncodingJSON is TestMatchesEncodingJSON on fuzzed lines, read
// after setupLines. A line with a key other than lower-case ASCII is
// skipped: such a key may match a field only case-insensitively, which
// encoding/json did and the parser does not.
func FuzzMatchesEncodingJSON(f *testing.F) {
	parsertest.FuzzMatchesReference(f, reference)
}

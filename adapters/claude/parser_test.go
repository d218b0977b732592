package claude

import (
	"slices"
	"testing"

	"github.com/zwarm/zwarm/adapters/internal/parsertest"
	"github.com/zwarm/zwarm/sessions/record"
)

// TestGoldens: real claude output (captured against the fake model) fed
// whole, line by line and in odd-sized chunks gives the golden events.
func TestGoldens(t *testing.T) {
	parsertest.Goldens(t, NewParser)
}

// TestResultFailureIsIsErrorNotSubtype: a failed turn is one turn.failed
// carrying the usage and cost a turn.completed would, whatever the subtype.
func TestResultFailureIsIsErrorNotSubtype(t *testing.T) {
	p := NewParser()
	evs := p.ParseLine([]byte(`{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"result":"API Error: 500 boom","total_cost_usd":0.25,"usage":{"input_tokens":7,"output_tokens":3}}`))
	if len(evs) != 1 || evs[0].Type != record.EventTurnFailed || evs[0].Text != "API Error: 500 boom" {
		t.Fatalf("%+v", evs)
	}
	if u := evs[0].Usage; u == nil || u.InputTokens != 7 || u.OutputTokens != 3 || u.TotalTokens != 10 ||
		evs[0].CostUSD == nil || *evs[0].CostUSD != 0.25 || !evs[0].ProcessCost {
		t.Fatalf("usage %+v cost %v", evs[0].Usage, evs[0].CostUSD)
	}
	evs = p.ParseLine([]byte(`{"type":"result","subtype":"error_max_turns","is_error":false,"num_turns":3,"total_cost_usd":0.5,"usage":{"input_tokens":10,"cache_read_input_tokens":5,"cache_creation_input_tokens":2,"output_tokens":3}}`))
	if len(evs) != 1 || evs[0].Type != record.EventTurnCompleted {
		t.Fatalf("%+v", evs)
	}
	u := evs[0].Usage
	if u.InputTokens != 17 || u.CachedInputTokens != 5 || u.CacheWriteInputTokens != 2 || u.TotalTokens != 20 || *evs[0].CostUSD != 0.5 || !evs[0].ProcessCost {
		t.Fatalf("usage %+v cost %v", u, evs[0].CostUSD)
	}
}

func TestParseLineNeverPanics(t *testing.T) {
	parsertest.Typed(t, NewParser(), []string{"", "{", "{}", "null", `{"type":"assistant"}`, `{"type":"assistant","message":{"content":"x"}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"nope","content":[{"type":"text","text":"a"}]}]}}`,
		`{"type":"result"}`, `{"type":"system"}`, "\xff\xfe", `[1]`})
}

// FuzzParseLine: whatever the lines, in whatever order, the parser neither
// panics nor makes an event without a type.
func FuzzParseLine(f *testing.F) {
	parsertest.FuzzParseLine(f, NewParser(), trickyLines)
}

func TestRetryText(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"attempt":1,"max_retries":10,"retry_delay_ms":582.57,"error_status":null,"error":"unknown"}`, "API retry 1/10 in 0.6s: connection error"},
		{`{"attempt":2,"max_retries":10,"retry_delay_ms":1167.4,"error_status":529,"error":"overloaded"}`, "API retry 2/10 in 1.2s: HTTP 529 overloaded"},
		{`{"attempt":3,"max_retries":10,"retry_delay_ms":32000,"error_status":500,"error":"server_error"}`, "API retry 3/10 in 32s: HTTP 500 server error"},
		{`{"attempt":1,"max_retries":2,"retry_delay_ms":40,"error_status":404,"error":"unknown"}`, "API retry 1/2 in 40ms: HTTP 404"},
		{`{"attempt":1,"error":"rate_limit"}`, "API retry 1: rate limit"},
		{`{"attempt":4}`, "API retry 4"},
	} {
		p := NewParser()
		line := `{"type":"system","subtype":"api_retry",` + c.line[1:]
		if evs := p.ParseLine([]byte(line)); len(evs) != 1 || evs[0].Type != record.EventRetry || evs[0].Text != c.want {
			t.Errorf("%s: %+v, want %q", c.line, evs, c.want)
		}
	}
}

// TestTaskPlanOrder: tasks show in the order of their ids, whichever call
// named them first, and a deleted one goes.
func TestTaskPlanOrder(t *testing.T) {
	p := NewParser()
	var last record.Event
	for _, l := range []string{
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"c","name":"TaskCreate","input":{"subject":"third"}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"c","content":"Task #3 created successfully: third"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u","name":"TaskUpdate","input":{"taskId":"10","status":"completed"}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"u","content":"Updated task #10 status"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"v","name":"TaskUpdate","input":{"taskId":"1","status":"in_progress","subject":"first"}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"v","content":"Updated task #1 subject, status"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"d","name":"TaskUpdate","input":{"taskId":"3","status":"deleted"}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"d","content":"Updated task #3 deleted"}]}}`,
	} {
		for _, ev := range p.ParseLine([]byte(l)) {
			last = ev
		}
	}
	want := []record.Todo{{Text: "first"}, {Text: "task #10", Completed: true}}
	if last.Type != record.EventTodoList || last.ItemID != "tasks" || last.Phase != record.PhaseUpdated || !slices.Equal(last.Todos, want) {
		t.Fatalf("%+v, want todos %+v", last, want)
	}
}

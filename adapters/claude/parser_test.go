package claude

import (
	"flag"
	"testing"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGoldens: real claude output (captured against the fake model) fed
// whole, line by line and in odd-sized chunks gives the golden events.
func TestGoldens(t *testing.T) {
	sessionstest.Goldens(t, func() sessions.Parser { return NewParser() }, *update)
}

func TestResultFailureIsIsErrorNotSubtype(t *testing.T) {
	p := NewParser()
	evs := p.ParseLine([]byte(`{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"result":"API Error: 500 boom","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}`))
	if len(evs) != 2 || evs[0].Type != sessions.EventTurnFailed || evs[0].Text == "" || evs[1].Type != sessions.EventTurnCompleted {
		t.Fatalf("%+v", evs)
	}
	evs = p.ParseLine([]byte(`{"type":"result","subtype":"error_max_turns","is_error":false,"num_turns":3,"total_cost_usd":0.5,"usage":{"input_tokens":10,"cache_read_input_tokens":5,"cache_creation_input_tokens":2,"output_tokens":3}}`))
	if len(evs) != 1 || evs[0].Type != sessions.EventTurnCompleted {
		t.Fatalf("%+v", evs)
	}
	u := evs[0].Usage
	if u.InputTokens != 17 || u.CachedInputTokens != 5 || u.CacheWriteInputTokens != 2 || u.TotalTokens != 20 || *evs[0].CostUSD != 0.5 || !evs[0].ProcessCost {
		t.Fatalf("usage %+v cost %v", u, evs[0].CostUSD)
	}
}

func TestParseLineNeverPanics(t *testing.T) {
	p := NewParser()
	for _, in := range []string{"", "{", "{}", "null", `{"type":"assistant"}`, `{"type":"assistant","message":{"content":"x"}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"nope","content":[{"type":"text","text":"a"}]}]}}`,
		`{"type":"result"}`, `{"type":"system"}`, "\xff\xfe", `[1]`} {
		for _, ev := range p.ParseLine([]byte(in)) {
			if ev.Type == "" {
				t.Errorf("%q: event without a type", in)
			}
		}
	}
}

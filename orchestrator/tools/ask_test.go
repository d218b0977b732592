package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestAskUserChecksItsArguments(t *testing.T) {
	var gotQ string
	var gotOpts []string
	asked := 0
	tool := AskUser(func(ctx context.Context, q string, opts []string) Result {
		asked++
		gotQ, gotOpts = q, opts
		return Result{Text: "postgres"}
	})
	r, _ := NewRegistry(tool)
	for _, c := range []struct{ args, want string }{
		{`{"question":"  "}`, "question is empty"},
		{`{"question":"` + strings.Repeat("x", MaxQuestionBytes+1) + `"}`, "at most 2000 bytes"},
		{`{"question":"which?","options":["a","b","c","d","e","f","g","h","i","j","k"]}`, "11 options; give at most 10"},
		{`{"question":"which?","options":["a"," "]}`, "each option must be"},
		{`{"question":"which?","other":1}`, `unknown field "other"`},
	} {
		if res := r.Call(context.Background(), "ask_user", json.RawMessage(c.args)); !res.IsError || !strings.Contains(res.Text, c.want) {
			t.Errorf("%.60s: %+v, want %q", c.args, res, c.want)
		}
	}
	if asked != 0 {
		t.Fatalf("asked %d times with bad arguments", asked)
	}
	res := r.Call(context.Background(), "ask_user", json.RawMessage(`{"question":" Which database? ","options":[" postgres ","sqlite"]}`))
	if res.IsError || res.Text != "postgres" || gotQ != "Which database?" || strings.Join(gotOpts, "|") != "postgres|sqlite" {
		t.Errorf("%+v %q %q", res, gotQ, gotOpts)
	}
}

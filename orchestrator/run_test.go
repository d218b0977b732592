package orchestrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// A whole run: two workers in parallel, a wait, a check, a verification
// through exec_command, finish. The state files say what happened.
func TestFullRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "FULL RUN: add a parser with tests")
	h.w.Script(map[string][]fakeagent.Step{
		"write the parser": append([]fakeagent.Step{{"run": "echo 'package parser' > parser.go"}, fakeagent.ChangesFile("parser.go")},
			fakeagent.Completes("parser.go written", 1000)...),
		"write the tests": fakeagent.Completes("tests written", 2000),
	})
	h.script(
		fakemodel.Reply{Reasoning: "plan: two workers", Encrypted: "ENC-ONE", Extra: map[string]any{"x_unknown": 7},
			Calls: []fakemodel.Call{call("delegate", map[string]any{"task": "write the parser"}), call("delegate", map[string]any{"task": "write the tests"})}},
		calls(call("wait", map[string]any{"mode": "all"})),
		withDelegated(0, func(id string) fakemodel.Reply { return calls(call("check_session", map[string]any{"session_id": id})) }),
		calls(call("exec_command", map[string]any{"cmd": "cat parser.go", "yield_time_ms": 60000, "login": false})),
		fakemodel.Reply{Text: "all good", Calls: []fakemodel.Call{call("finish", map[string]any{"summary": "parser and tests done; verified"})}},
	)
	rec := h.execute(h.settings(nil), 0)
	if rec.Status != runs.StatusCompleted || rec.Summary != "parser and tests done; verified" || rec.Steps != 5 {
		t.Fatalf("record %+v", rec)
	}
	disk, items, evs := h.onDisk(rec.ID)
	if disk.Status != runs.StatusCompleted || disk.Owner != nil || disk.EndedAt == nil || len(disk.Workers) != 2 {
		t.Fatalf("run.json %+v", disk)
	}
	// 5 calls of the default 100 in / 10 out; gpt-5.1 at $1.25/$10 per M.
	if disk.Usage.InputTokens != 500 || disk.Usage.OutputTokens != 50 || disk.CostUSD == nil ||
		fmt.Sprintf("%.6f", *disk.CostUSD) != fmt.Sprintf("%.6f", (500*1.25+50*10.0)/1e6) {
		t.Errorf("model usage %+v cost %v", disk.Usage, disk.CostUSD)
	}
	if disk.WorkerUsage.InputTokens != 3000 || disk.WorkerCostUSD == nil || len(disk.Accounts) != 2 {
		t.Errorf("worker usage %+v %v %v", disk.WorkerUsage, disk.WorkerCostUSD, disk.Accounts)
	}
	for _, id := range disk.Workers {
		if s := workerOf(t, h.w, id); s.Source.String() != "run:"+rec.ID || s.Status() != "completed" {
			t.Errorf("worker %s: source %s status %s", id, s.Source, s.Status())
		}
	}
	if err := checkPairs(items); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "check_session output", strings.Join(outputsOf(items, "check_session"), ""), `"last_message":"parser.go written"`, `"path":"parser.go"`)
	mustContain(t, "exec_command output", strings.Join(outputsOf(items, "exec_command"), ""), "Process exited with code 0", "package parser")
	mustContain(t, "wait output", strings.Join(outputsOf(items, "wait"), ""), `"timed_out":false`, "tests written", `"running":[]`)

	// The reasoning item went back verbatim, unknown field and all, with
	// its calls; each request had one observation, the newest.
	reqs := h.requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	var reasoning json.RawMessage
	for _, it := range items {
		if inspect(it).Type == "reasoning" {
			reasoning = it
		}
	}
	if !bytes.Contains(reasoning, []byte(`"encrypted_content":"ENC-ONE"`)) || !bytes.Contains(reasoning, []byte(`"x_unknown":7`)) {
		t.Fatalf("stored reasoning %s", reasoning)
	}
	for i, req := range reqs {
		in := fakemodel.Input(req.Body)
		obs := 0
		for _, it := range in {
			if strings.HasPrefix(it.Text, observationPrefix) {
				obs++
			}
		}
		last := in[len(in)-1]
		if obs != 1 || !strings.HasPrefix(last.Text, fmt.Sprintf("%s Step %d of 20.", observationPrefix, i+1)) {
			t.Errorf("request %d: %d observations, last item %q", i+1, obs, last.Text)
		}
		if i > 0 {
			if !bytes.Contains(req.Body, reasoning) {
				t.Errorf("request %d lacks the reasoning item verbatim", i+1)
			}
			if in[2].Type != "reasoning" || in[3].Type != "function_call" {
				t.Errorf("request %d: reasoning does not precede its calls: %s, %s", i+1, in[2].Type, in[3].Type)
			}
		}
		if bytes.Contains(req.Body, []byte("previous_response_id")) || !bytes.Contains(req.Body, []byte(`"store":false`)) {
			t.Errorf("request %d is not stateless", i+1)
		}
	}
	mustContain(t, "the third observation", fakemodel.Input(reqs[2].Body)[len(fakemodel.Input(reqs[2].Body))-1].Text,
		"Workers: 0 running, 2 completed")
	if strings.Contains(string(reqs[2].Body), "Finished since your last step") {
		t.Error("the observation announced workers wait had already shown")
	}

	kinds := map[runs.EventType]int{}
	for _, ev := range evs {
		kinds[ev.Type]++
	}
	for typ, n := range map[runs.EventType]int{runs.EventStarted: 1, runs.EventModelCall: 5, runs.EventModelResponse: 5, runs.EventUsage: 5,
		runs.EventToolCall: 6, runs.EventToolResult: 6, runs.EventStopped: 1} {
		if kinds[typ] != n {
			t.Errorf("%d %s events, want %d (all: %v)", kinds[typ], typ, n, kinds)
		}
	}
	if last := evs[len(evs)-1]; last.Type != runs.EventStopped || last.RunStatus != runs.StatusCompleted {
		t.Errorf("last event %+v", last)
	}
	if len(h.eventsOf(runs.EventToolResult)) != 6 {
		t.Errorf("OnEvent saw %d results", len(h.eventsOf(runs.EventToolResult)))
	}
}

// A reply without a tool call gets a reminder and costs a step; tool
// errors come back as results and the run goes on.
func TestToolErrorsAndTextRepliesDoNotEndTheRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "ERRORS: keep going")
	h.script(
		fakemodel.Reply{Text: "I think I am done."},
		calls(call("check_session", map[string]any{"session_id": "nope"}), call("no_such_tool", map[string]any{}),
			fakemodel.Call{Name: "delegate", Args: `{"task": 3}`}),
		calls(call("finish", map[string]any{"summary": "done"})),
	)
	rec := h.execute(h.settings(nil), 0)
	if rec.Status != runs.StatusCompleted || rec.Steps != 3 {
		t.Fatalf("record %+v", rec)
	}
	_, items, _ := h.onDisk(rec.ID)
	all := string(bytes.Join(toBytes(items), []byte("\n")))
	mustContain(t, "conversation", all, "Your reply called no tool", `no worker \"nope\"`, `there is no tool \"no_such_tool\"`,
		"parameter task must be of type string")
	res := h.eventsOf(runs.EventToolResult)
	if len(res) != 4 || !res[0].IsError || !res[1].IsError || !res[2].IsError || res[3].IsError {
		t.Errorf("results %+v", res)
	}
}

func toBytes(items []json.RawMessage) [][]byte {
	out := make([][]byte, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out
}

func TestUnknownModelPriceIsSaidOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "PRICE: unknown")
	h.script(calls(call("list_sessions", map[string]any{})), calls(call("finish", map[string]any{"summary": "ok"})))
	rec := h.execute(h.settings(func(s *Settings) { s.Model = "house-model"; s.Limits.MaxCostUSD = 1 }), 0)
	if rec.Status != runs.StatusCompleted || rec.CostUSD != nil || rec.Usage.TotalTokens != 220 {
		t.Fatalf("record %+v", rec)
	}
	n := h.eventsOf(runs.EventNotice)
	if len(n) != 1 || !strings.Contains(n[0].Text, `the price of model house-model is unknown, so its cost is not counted against max_cost; add [prices."house-model"]`) {
		t.Errorf("notices %+v", n)
	}
}

// A response cut short after its reasoning keeps the conversation valid.
func TestIncompleteResponse(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "INCOMPLETE: cut short")
	h.script(fakemodel.Reply{Reasoning: "thinking long", Encrypted: "E", Incomplete: "max_output_tokens"},
		calls(call("finish", map[string]any{"summary": "ok"})))
	rec := h.execute(h.settings(nil), 0)
	if rec.Status != runs.StatusCompleted || rec.Steps != 2 {
		t.Fatalf("record %+v", rec)
	}
	_, items, _ := h.onDisk(rec.ID)
	if err := checkPairs(items); err != nil {
		t.Fatal(err)
	}
	n := h.eventsOf(runs.EventNotice)
	if len(n) != 1 || n[0].Text != "the response was incomplete (max_output_tokens); dropped 1 reasoning items that nothing followed" {
		t.Errorf("notices %+v", n)
	}
}

// A model that only talks, reminded each time, ends its run after
// maxSilent replies in a row, not at the step limit; a tool call between
// them starts the count again.
func TestAModelThatOnlyTalksEndsItsRun(t *testing.T) {
	t.Parallel()
	talk := func(n int) []fakemodel.Reply {
		out := make([]fakemodel.Reply, n)
		for i := range out {
			out[i] = fakemodel.Reply{Text: "done, I think"}
		}
		return out
	}
	h := newHarness(t, "TALK: only")
	h.script(talk(maxSilent + 5)...)
	rec := h.execute(h.settings(nil), 0)
	if rec.Status != runs.StatusFailed || rec.Steps != maxSilent || !strings.Contains(rec.StopReason, "without calling a tool") {
		t.Fatalf("a model that only talks: %s after %d steps: %q", rec.Status, rec.Steps, rec.StopReason)
	}

	h = newHarness(t, "TALK: then act")
	replies := append(talk(maxSilent-1), calls(call("list_sessions", map[string]any{})))
	replies = append(replies, talk(maxSilent-1)...)
	h.script(append(replies, calls(call("finish", map[string]any{"summary": "ok"})))...)
	if rec := h.execute(h.settings(nil), 0); rec.Status != runs.StatusCompleted || rec.Steps != 2*maxSilent {
		t.Fatalf("talk broken by a call: %s after %d steps: %q", rec.Status, rec.Steps, rec.StopReason)
	}
}

package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
)

func TestRendererTellsTheStoryInOrder(t *testing.T) {
	cost := func(c float64) *float64 { return &c }
	id := "3f2a1c9d-0000-4000-8000-000000000001"
	events := []runs.Event{
		{Type: runs.EventStarted, Run: "7c1e2a3b-0000-4000-8000-000000000000", Model: "gpt-5.1", Dir: "/w", Task: "add \x1b[2Jrate limiting", Limits: &runs.Limits{MaxSteps: 50}},
		{Type: runs.EventModelCall, Step: 1},
		{Type: runs.EventModelResponse, Step: 1, Reasoning: "two pieces", Text: "starting"},
		{Type: runs.EventUsage, Step: 1, Totals: &runs.Totals{Usage: record.Usage{TotalTokens: 1200}, CostUSD: cost(0.002), WorkerCostUSD: cost(0), WorkersRunning: 1}},
		{Type: runs.EventToolCall, Step: 1, Tool: "delegate", Args: json.RawMessage(`{"working_dir":"sub","task":"write the limiter"}`)},
		{Type: runs.EventToolResult, Step: 1, Tool: "delegate", Output: `{"session_id":"` + id + `","status":"pending","adapter":"codex","model":"gpt-5.1-codex"}`},
		{Type: runs.EventToolCall, Step: 1, Tool: "wait", Args: json.RawMessage(`{"session_ids":["` + id + `"]}`)},
		{Type: runs.EventWorker, Step: 1, Text: "worker 3f2a1c9d completed"},
		{Type: runs.EventToolResult, Step: 1, Tool: "wait", Output: `{"finished":[{"session_id":"` + id + `","status":"completed"}],"running":[{"session_id":"x"}],"timed_out":true}`},
		{Type: runs.EventToolCall, Step: 1, Tool: "exec_command", Args: json.RawMessage(`{"cmd":"go test ./..."}`)},
		{Type: runs.EventToolResult, Step: 1, Tool: "exec_command", Output: "Wall time: 1.0 seconds\nProcess exited with code 1\nOutput:\nFAIL x\nFAIL\n"},
		{Type: runs.EventToolResult, Step: 1, Tool: "converse", IsError: true, Output: "no worker \"zz\": use an id"},
		{Type: runs.EventRetry, Step: 2, Status: 429, Attempt: 1, Text: "the model API answered with an error"},
		{Type: runs.EventCompaction, Step: 2, Compaction: &runs.Compaction{DroppedItems: 12, DroppedCalls: 5, BeforeTokens: 250000, AfterTokens: 160000}},
		{Type: runs.EventGuard, Step: 2, Watcher: "progress", Action: runs.ActionNudge, Text: "you repeat yourself"},
		{Type: runs.EventLimit, Step: 2, Text: "the run used its 2 steps (max_steps)"},
		{Type: runs.EventStopped, Step: 2, RunStatus: runs.StatusLimited, Reason: "the run used its 2 steps (max_steps)"},
	}
	var r Renderer
	var b strings.Builder
	for _, ev := range events {
		for _, l := range r.Lines(ev) {
			b.WriteString(strings.Repeat("  ", l.Indent) + l.Text + "\n")
		}
	}
	want := `run 7c1e2a3b · gpt-5.1 · up to 50 steps · /w
task: add \x1b[2Jrate limiting
step 1/50 · $0.0020 (model $0.0020, workers $0.00) · 1.2k tokens · workers 1 running, 0 done
  · two pieces
  » starting
  → delegate task="write the limiter" working_dir="sub"
    ← started 3f2a1c9d (codex, gpt-5.1-codex)
  → wait session_ids=[3f2a1c9d]
    · worker 3f2a1c9d completed
    ← finished: 3f2a1c9d completed · 1 running · timed out
  → exec_command cmd="go test ./..."
    ← exit 1 · FAIL
    ✗ no worker "zz": use an id
  ↻ HTTP 429: the model API answered with an error
  ⇢ compacted the conversation: 12 items dropped (5 tool calls), 250k → 160k tokens
  ! watcher progress (nudge): you repeat yourself
  ■ the run used its 2 steps (max_steps)
limited after 2 steps: the run used its 2 steps (max_steps)
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestShortResultOfTheWorktreeTools(t *testing.T) {
	id := "3f2a1c9d-0000-4000-8000-000000000001"
	for _, c := range []struct{ tool, output, want string }{
		{"land_session", `{"session_id":"` + id + `","landed":true,"into":"main","commit":"0123456789abcdef0123","changes":"+3 -1 in 2 files"}`,
			"landed 3f2a1c9d into main as 0123456789ab (+3 -1 in 2 files)"},
		{"land_session", `{"session_id":"` + id + `","landed":false,"nothing":true,"note":"nothing to land: the worker changed nothing"}`,
			"nothing to land: the worker changed nothing"},
		{"update_session", `{"session_id":"` + id + `","note":"its branch has all of main already"}`, "its branch has all of main already"},
		{"diff_session", "worker " + id + " · completed · branch zwarm/x from main (abc) · +1 -0 in 1 file · not landed\ndiff --git a/a b/a\n",
			"3f2a1c9d · completed · branch zwarm/x from main (abc) · +1 -0 in 1 file · not landed"},
	} {
		if got := ShortResult(c.tool, c.output); got != c.want {
			t.Errorf("%s: %q, want %q", c.tool, got, c.want)
		}
	}
}

func TestChangesText(t *testing.T) {
	a, b, p := "3f2a1c9d-0000-4000-8000-000000000001", "9b1e2f3a-0000-4000-8000-000000000002", "77aa0000-0000-4000-8000-000000000003"
	got := ChangesText([]runs.WorkerChange{
		{Session: a, Outcome: runs.ChangeLanded, Into: "main", Commit: "0123456789abcdef", Changes: "+3 -1 in 2 files", Task: "add the parser"},
		{Session: b, Outcome: runs.ChangeUnlanded, Branch: "zwarm/" + b, Changes: "+12 -0 in 1 file", Running: true, Task: "add the tests"},
		{Session: p, Outcome: runs.ChangeInPlace, Task: "fix the docs"},
	})
	want := "Landed:\n- 3f2a1c9d into main as 0123456789ab (+3 -1 in 2 files): add the parser\n" +
		"Not landed (the change is still on the worker's branch):\n- 9b1e2f3a +12 -0 in 1 file on branch zwarm/" + b + " (still running): add the tests\n" +
		"Worked in place (what they changed is in their directories already):\n- 77aa0000: fix the docs"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if ChangesText(nil) != "" {
		t.Error("no changes, yet a text")
	}
}

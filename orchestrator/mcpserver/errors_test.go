package mcpserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// Every refusal is a tool result flagged isError, in words that name the
// served tools and say what to do.
func TestMCPToolErrorsAreResultsAModelCanActOn(t *testing.T) {
	t.Parallel()
	c := connect(t, &Config{MaxWorkers: 1, WaitCap: config.Duration{Duration: DefaultWaitCap}}, 0)
	gate := t.TempDir() + "/gate"
	c.w.Script(map[string][]fakeagent.Step{"busy": append([]fakeagent.Step{fakeagent.WaitFile(gate)}, fakeagent.Completes("busy done", 100)...)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	other, err := c.w.Manager.Spawn(ctx, sessions.SpawnRequest{Task: "someone else's", WorkingDir: c.w.Work})
	if err != nil {
		t.Fatal(err)
	}
	check := func(tool string, args any, want ...string) {
		t.Helper()
		res := c.call(tool, args, nil)
		got := text(res)
		if !res.IsError {
			t.Errorf("%s(%v) is not an error: %s", tool, args, got)
			return
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s(%v): %q lacks %q", tool, args, got, w)
			}
		}
		if m := renamed().FindString(got); m != "" || strings.Contains(got, "[orchestrator]") {
			t.Errorf("%s(%v): %q names %q, which is not served", tool, args, got, m)
		}
	}
	for _, tc := range []struct {
		tool string
		args any
		want []string
	}{
		{"spawn", map[string]any{"task": "   "}, []string{"task is empty"}},
		{"spawn", map[string]any{"task": 5}, []string{"parameter task must be of type string", "bad arguments for spawn", "working_dir"}},
		{"spawn", map[string]any{"task": "x", "dir": "sub"}, []string{`unknown field "dir"`, "its parameters: adapter, isolation, max_cost_usd, model, reasoning_effort, role, sandbox, slurm, task, working_dir"}},
		{"spawn", map[string]any{"task": "x", "working_dir": "/"}, []string{"outside the allowed directories", "[mcp] table"}},
		{"spawn", []int{1}, []string{"must be a JSON object"}},
		{"show", map[string]any{"session_id": "nope"}, []string{`no worker "nope"`, "spawn or list returned"}},
		{"show", map[string]any{"session_id": other.ID}, []string{"not one of your workers", "list shows yours"}},
		{"show", map[string]any{}, []string{"session_id is required", "from spawn or list"}},
		{"kill", map[string]any{"session_id": 7}, []string{"must be of type string"}},
		{"inject", map[string]any{"session_id": other.ID, "message": ""}, []string{"message is empty"}},
		{"wait", map[string]any{"mode": "some"}, []string{`mode must be "any" or "all"`}},
		{"wait", map[string]any{"session_ids": "abc"}, []string{"parameter session_ids must be of type array"}},
		{"get_trajectory", map[string]any{"session_id": "0000"}, []string{"no worker"}},
		{"list", map[string]any{"status": "sleeping"}, []string{"sleeping"}},
	} {
		check(tc.tool, tc.args, tc.want...)
	}
	// The limit: one worker runs, a second is refused.
	busy := c.spawn("busy")
	check("spawn", map[string]any{"task": "second one"}, "limit is 1 (max_workers)", "stop one (kill), then spawn again")
	// A tool that does not exist is the protocol's error.
	if _, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "delegate", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "delegate") {
		t.Errorf("an unknown tool: %v", err)
	}
	c.ok("kill", map[string]any{"session_id": busy}, nil)
	c.w.Manager.Kill(ctx, other.ID)
}

package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
)

// spawn takes a role of config.toml, as delegate does; an unknown one is
// refused with the ones there are.
func TestMCPSpawnWithARole(t *testing.T) {
	t.Parallel()
	c := connectTo(t, testenv.New(t, bins, "[roles.reviewer]\nreasoning_effort = \"high\"\nsandbox = \"read-only\"\n"+
		"instructions = \"Review only.\"\nmax_cost_usd = 1.0\n"), nil, 0)
	var r struct {
		SessionID       string  `json:"session_id"`
		Role            string  `json:"role"`
		ReasoningEffort string  `json:"reasoning_effort"`
		Sandbox         string  `json:"sandbox"`
		MaxCostUSD      float64 `json:"max_cost_usd"`
	}
	c.ok("spawn", map[string]any{"task": "review the parser", "role": "reviewer", "max_cost_usd": 0.25}, &r)
	if r.Role != "reviewer" || r.ReasoningEffort != "high" || r.Sandbox != "read-only" || r.MaxCostUSD != 0.25 {
		t.Fatalf("spawn: %+v", r)
	}
	s, err := c.w.Manager.Get(context.Background(), r.SessionID)
	if err != nil || s.Role != "reviewer" || s.Instructions != "Review only." || s.MaxCostUSD != 0.25 {
		t.Fatalf("record %+v %v", s, err)
	}
	res := c.call("spawn", map[string]any{"task": "test it", "role": "tester"}, nil)
	if got := text(res); !res.IsError || !strings.Contains(got, `no role "tester"`) || !strings.Contains(got, "reviewer") {
		t.Fatalf("unknown role: %v %s", res.IsError, got)
	}
}

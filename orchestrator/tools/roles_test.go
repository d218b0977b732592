package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
)

const reviewerRole = `
[roles.reviewer]
adapter = "codex"
model = "gpt-5.1-codex"
reasoning_effort = "high"
sandbox = "read-only"
instructions = "Review only: change no file."
max_cost_usd = 2.0
`

// delegate takes a role, and settings that win over the role's; the
// role's model wins over the tools' default model.
func TestDelegateWithARole(t *testing.T) {
	t.Parallel()
	w := testenv.New(t, bins, reviewerRole)
	reg, err := NewRegistry(Workers(WorkerOptions{Sessions: w.Manager, Source: record.RunSource("run-test"), Dir: w.Work,
		DefaultAdapter: "codex", DefaultModel: "gpt-5.1-codex-mini"})...)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, w: w, reg: reg}
	tool, _ := reg.Get("delegate")
	if !strings.Contains(string(tool.Schema), "configured: reviewer") {
		t.Errorf("delegate does not name the configured roles: %s", tool.Schema)
	}
	var d struct {
		SessionID       string  `json:"session_id"`
		Model           string  `json:"model"`
		Role            string  `json:"role"`
		ReasoningEffort string  `json:"reasoning_effort"`
		Sandbox         string  `json:"sandbox"`
		MaxCostUSD      float64 `json:"max_cost_usd"`
	}
	f.mustOK("delegate", map[string]any{"task": "review the parser", "role": "reviewer", "reasoning_effort": "low"}, &d)
	if d.Model != "gpt-5.1-codex" || d.Role != "reviewer" || d.ReasoningEffort != "low" || d.Sandbox != "read-only" || d.MaxCostUSD != 2 {
		t.Fatalf("delegate: %+v", d)
	}
	s, err := w.Manager.Get(context.Background(), d.SessionID)
	if err != nil || s.Instructions != "Review only: change no file." || s.ReasoningEffort != "low" || s.MaxCostUSD != 2 {
		t.Fatalf("record %+v %v", s, err)
	}
	f.mustOK("delegate", map[string]any{"task": "cap it", "role": "reviewer", "max_cost_usd": 0.5, "sandbox": "workspace-write"}, &d)
	if d.MaxCostUSD != 0.5 || d.Sandbox != "workspace-write" || d.ReasoningEffort != "high" {
		t.Fatalf("overrides: %+v", d)
	}

	for _, c := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"role": "tester"}, []string{`no role "tester"`, "reviewer"}},
		{map[string]any{"reasoning_effort": "huge"}, []string{`effort "huge"`, "xhigh"}},
		{map[string]any{"max_cost_usd": 1, "model": "mystery-model"}, []string{`[prices."mystery-model"]`}},
		{map[string]any{"max_cost_usd": -1}, []string{"max_cost_usd -1"}},
		{map[string]any{"max_cost_usd": "a lot"}, []string{"max_cost_usd must be of type number"}},
		// A misspelt resource is said as such, whatever the runner.
		{map[string]any{"slurm": map[string]any{"partiton": "gpu"}}, []string{`slurm has no resource "partiton"`, "partition, time"}},
	} {
		c.args["task"] = "x"
		res := f.call("delegate", c.args, nil)
		if !res.IsError {
			t.Errorf("%v: not refused: %s", c.args, res.Text)
			continue
		}
		for _, s := range c.want {
			if !strings.Contains(res.Text, s) {
				t.Errorf("%v: %q does not say %q", c.args, res.Text, s)
			}
		}
	}
	list, _ := w.Manager.List(context.Background(), listing.Options{})
	if len(list) != 2 {
		t.Errorf("%d workers, want the 2 delegated", len(list))
	}
}

// The default model goes with the default adapter ([mcp] model with
// [mcp] adapter, else default_adapter, else codex), whether a delegation
// names that adapter or none.
func TestDelegateNamingTheDefaultAdapterGetsTheDefaultModel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ config, adapter, named, want string }{
		{"", "", "codex", "my-model"},
		{"", "", "", "my-model"},
		{`default_adapter = "claude"`, "", "claude", "my-model"},
		{`default_adapter = "claude"`, "", "codex", ""},
		{"", "claude", "claude", "my-model"},
		{"", "claude", "codex", ""},
	} {
		// The claude workers only need to start: what the call answers
		// is the question.
		w := testenv.New(t, bins, c.config+"\n[adapters.claude]\nbinary = \"true\"\n")
		reg, err := NewRegistry(Workers(WorkerOptions{Sessions: w.Manager, Source: record.RunSource("run-test"), Dir: w.Work,
			DefaultAdapter: c.adapter, DefaultModel: "my-model"})...)
		if err != nil {
			t.Fatal(err)
		}
		f := &fixture{t: t, w: w, reg: reg}
		args := map[string]any{"task": "x"}
		if c.named != "" {
			args["adapter"] = c.named
		}
		var d struct{ Model string }
		f.mustOK("delegate", args, &d)
		if got := d.Model == "my-model"; got != (c.want == "my-model") {
			t.Errorf("%q, tools' default adapter %q, delegate naming %q: model %q, want the default model: %v", c.config, c.adapter, c.named, d.Model, !got)
		}
	}
}

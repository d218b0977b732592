package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

const reviewerRole = `
[roles.reviewer]
adapter = "codex"
model = "gpt-5.1-codex"
reasoning_effort = "medium"
sandbox = "read-only"
instructions = "Review only: change no file."
max_cost_usd = 3.0
`

// A role's settings, with what the command line overrides, are recorded,
// shown, and passed to the real codex command line on every turn.
func TestSpawnWithARoleAndOverrides(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), reviewerRole)
	var s session
	mustJSON(t, w.ok("spawn", "--wait", "--json", "--role", "reviewer", "--reasoning-effort", "high", "--max-cost", "1.5", "review the change"), &s)
	if s.Status() != record.StatusCompleted || s.Role != "reviewer" || s.Model != "gpt-5.1-codex" || s.ReasoningEffort != "high" ||
		s.Sandbox != "read-only" || s.Instructions != "Review only: change no file." || s.MaxCostUSD != 1.5 {
		t.Fatalf("spawn --json: %+v", s.Session)
	}
	if rec := w.record(s.ID); rec.Role != "reviewer" || rec.ReasoningEffort != "high" || rec.MaxCostUSD != 1.5 || rec.Instructions == "" {
		t.Fatalf("meta.json: %+v", rec)
	}
	// A follow-up resumes the thread with the same settings, whatever
	// config.toml says by then.
	writeFile(t, filepath.Join(w.State, "config.toml"), "")
	w.ok("inject", "--wait", s.ID, "and the tests")
	inv := w.Invocations()
	if len(inv) != 2 {
		t.Fatalf("%d agent runs: %+v", len(inv), inv)
	}
	for i, want := range [][]string{
		{"-c", `model_reasoning_effort="high"`, "-c", `developer_instructions="Review only: change no file."`, "exec", "--json"},
		{"-c", `model_reasoning_effort="high"`, "-c", `developer_instructions="Review only: change no file."`, "exec", "resume"},
	} {
		// A session with a cost limit has codex report each call's usage
		// to its supervisor as the turn goes (-c otel.exporter=...).
		var argv []string
		telemetry := false
		for j := 0; j < len(inv[i].Argv); j++ {
			if a := inv[i].Argv; a[j] == "-c" && j+1 < len(a) && strings.HasPrefix(a[j+1], "otel.exporter={otlp-http={endpoint=\"http://127.0.0.1:") {
				telemetry = true
				j++
				continue
			}
			argv = append(argv, inv[i].Argv[j])
		}
		if !telemetry || !slices.Equal(argv[:len(want)], want) || !hasArgs(argv, "-m", "gpt-5.1-codex") {
			t.Errorf("turn %d (telemetry %v): %q", i+1, telemetry, inv[i].Argv)
		}
	}
	if !hasArgs(inv[0].Argv, "-s", "read-only") || !hasArgs(inv[1].Argv, "-c", `sandbox_mode="read-only"`) {
		t.Errorf("sandbox: %q / %q", inv[0].Argv, inv[1].Argv)
	}
	shown := w.ok("show", s.ID)
	for _, line := range []string{"role     reviewer · instructions: Review only: change no file.",
		"settings reasoning effort high · sandbox read-only · cost limit $1.50"} {
		if !strings.Contains(shown, line+"\n") {
			t.Errorf("show lacks %q:\n%s", line, shown)
		}
	}
	if list := w.ls(); len(list) != 1 || list[0].Role != "reviewer" || list[0].MaxCostUSD != 1.5 {
		t.Errorf("ls --json: %+v", list)
	}
}

func hasArgs(argv []string, seq ...string) bool {
	for i := range argv {
		if i+len(seq) <= len(argv) && slices.Equal(argv[i:i+len(seq)], seq) {
			return true
		}
	}
	return false
}

func TestSpawnSettingsThatCannotWork(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), reviewerRole)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--role", "tester"}, []string{`no role "tester"`, "reviewer"}},
		{[]string{"--reasoning-effort", "max"}, []string{`unknown codex reasoning effort "max"`, "xhigh"}},
		{[]string{"--role", "reviewer", "--reasoning-effort", "max"}, []string{`"max"`, "with role reviewer"}},
		{[]string{"--max-cost", "1", "-m", "mystery-model"}, []string{`model "mystery-model"`, `[prices."mystery-model"]`}},
		{[]string{"--max-cost", "-1"}, []string{"--max-cost -1"}},
	} {
		r := w.zwarm(append(append([]string{"spawn"}, c.args...), "x")...)
		if r.code != cli.ExitUsage {
			t.Errorf("spawn %q: exit %d, want %d: %s", c.args, r.code, cli.ExitUsage, r.stderr)
		}
		for _, s := range c.want {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("spawn %q: %q does not say %q", c.args, r.stderr, s)
			}
		}
	}
	if out := w.ok("__complete", "spawn", "--role", ""); !strings.Contains(out, "reviewer\n") {
		t.Errorf("--role completes %q", out)
	}
	if out := w.ok("__complete", "spawn", "--reasoning-effort", ""); !strings.Contains(out, "xhigh\n") || !strings.Contains(out, "max\n") {
		t.Errorf("--reasoning-effort completes %q", out)
	}
	writeFile(t, filepath.Join(w.State, "config.toml"), "[roles.reviewer]\nreasoning_efort = \"high\"\n")
	if r := w.zwarm("spawn", "x"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "roles.reviewer.reasoning_efort") ||
		!strings.Contains(r.stderr, "reasoning_effort") {
		t.Errorf("a typo in a role: exit %d %q", r.code, r.stderr)
	}
	if ids := w.IDs(); len(ids) != 0 {
		t.Errorf("refused spawns made sessions: %v", ids)
	}
}

// A worker that passes its cost limit is stopped there, and says why.
func TestSpawnMaxCostStopsTheWorker(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	went := filepath.Join(t.TempDir(), "went-on")
	// gpt-5.1-codex-mini, the default: $0.25 per million input tokens.
	w.setScript([]fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		fakeagent.Out(`{"type":"turn.completed","usage":{"input_tokens":400000,"cached_input_tokens":0,"output_tokens":0,"reasoning_output_tokens":0}}`),
		{"sleep_ms": 20000},
		{"run": "touch " + went},
	})
	r := w.zwarm("spawn", "--wait", "--json", "--max-cost", "0.05", "spend")
	var s session
	mustJSON(t, r.stdout, &s)
	const why = "over its cost limit of $0.05: $0.10 spent"
	if r.code != cli.ExitFailure || s.Status() != record.StatusKilled || s.Error != why {
		t.Fatalf("exit %d: %s %q", r.code, s.Status(), s.Error)
	}
	if shown := w.ok("show", s.ID); !strings.Contains(shown, "error    "+why) {
		t.Errorf("show:\n%s", shown)
	}
	if _, err := os.Stat(went); err == nil {
		t.Error("the agent went on past its cost limit")
	}
	if r := w.zwarm("inject", s.ID, "spend more"); r.code != cli.ExitFailure || !strings.Contains(r.stderr, "takes no follow-up: it is "+why) ||
		!strings.Contains(r.stderr, "higher --max-cost") {
		t.Errorf("a follow-up past the limit: %+v", r)
	}
	// A limit not above what it spent is refused, nothing sent; a higher
	// one continues its thread.
	if r := w.zwarm("inject", "--max-cost", "0.08", s.ID, "spend more"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "$0.08 is not above the $0.10") {
		t.Errorf("a limit below the spend: %+v", r)
	}
	w.setScript(fakeagent.Completes("went on", 400_100)) // codex counts the thread's tokens
	w.ok("inject", "--max-cost", "1", "--wait", s.ID, "spend more")
	got := w.show(s.ID)
	if got.MaxCostUSD != 1 || got.Status() != record.StatusCompleted || len(got.Turns) != 2 || !got.Turns[1].Resumed || got.ThreadID != s.ThreadID {
		t.Errorf("after a higher limit: limit %v, %s, turns %d, thread %q (was %q)", got.MaxCostUSD, got.Status(), len(got.Turns), got.ThreadID, s.ThreadID)
	}
}

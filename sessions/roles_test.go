package sessions_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/state"
)

// What a spawn names itself wins over its role; a role's model goes with
// its adapter only.
func TestApplyRole(t *testing.T) {
	c := &config.Config{Roles: map[string]config.RoleConfig{
		"reviewer": {Adapter: "codex", Model: "gpt-5.1-codex", ReasoningEffort: "high", Sandbox: "read-only", Instructions: " Review only. \n", MaxCostUSD: 2},
		"cheap":    {ReasoningEffort: "low"},
		"cluster":  {Runner: "slurm"},
	}}
	for _, tc := range []struct {
		name string
		in   sessions.SpawnRequest
		want sessions.SpawnRequest
	}{
		{"none", sessions.SpawnRequest{Model: "m"}, sessions.SpawnRequest{Model: "m"}},
		{"all from the role", sessions.SpawnRequest{Role: "reviewer"},
			sessions.SpawnRequest{Role: "reviewer", Adapter: "codex", Model: "gpt-5.1-codex", ReasoningEffort: "high", Sandbox: "read-only", Instructions: "Review only.", MaxCostUSD: 2}},
		{"overridden", sessions.SpawnRequest{Role: "reviewer", Model: "gpt-5.2", ReasoningEffort: "xhigh", Sandbox: "workspace-write", MaxCostUSD: 0.5},
			sessions.SpawnRequest{Role: "reviewer", Adapter: "codex", Model: "gpt-5.2", ReasoningEffort: "xhigh", Sandbox: "workspace-write", Instructions: "Review only.", MaxCostUSD: 0.5}},
		{"another adapter drops the role's model", sessions.SpawnRequest{Role: "reviewer", Adapter: "claude"},
			sessions.SpawnRequest{Role: "reviewer", Adapter: "claude", ReasoningEffort: "high", Sandbox: "read-only", Instructions: "Review only.", MaxCostUSD: 2}},
		{"a role without an adapter", sessions.SpawnRequest{Role: "cheap", Adapter: "claude", Model: "opus"},
			sessions.SpawnRequest{Role: "cheap", Adapter: "claude", Model: "opus", ReasoningEffort: "low"}},
		{"a role's runner", sessions.SpawnRequest{Role: "cluster"}, sessions.SpawnRequest{Role: "cluster", Runner: "slurm"}},
		{"a spawn's runner wins", sessions.SpawnRequest{Role: "cluster", Runner: "local"}, sessions.SpawnRequest{Role: "cluster", Runner: "local"}},
	} {
		got, err := sessions.ApplyRole(c, tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v %v\nwant %+v", tc.name, got, err, tc.want)
		}
		if again, _ := sessions.ApplyRole(c, got); !reflect.DeepEqual(again, got) {
			t.Errorf("%s: applied twice: %+v", tc.name, again)
		}
	}
}

// A role's settings are recorded and given to the agent on every turn,
// the follow-ups' too, whatever config.toml says by then.
func TestSpawnWithARoleRecordsItAndEveryTurnGetsIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.WriteConfig("kill_grace = \"300ms\"\n[roles.reviewer]\nadapter = \"fake\"\nreasoning_effort = \"high\"\nsandbox = \"read-only\"\ninstructions = \"Review only.\"\nmax_cost_usd = 5.0\n")
	ctx := context.Background()
	s, err := w.Manager.Spawn(ctx, sessions.SpawnRequest{Task: "review it", Role: "reviewer", ReasoningEffort: "low", WorkingDir: w.Work})
	if err != nil {
		t.Fatal(err)
	}
	if s.Adapter != "fake" || s.Role != "reviewer" || s.ReasoningEffort != "low" || s.Sandbox != "read-only" ||
		s.Instructions != "Review only." || s.MaxCostUSD != 5 {
		t.Fatalf("record %+v", s)
	}
	w.wait(s.ID)
	w.WriteConfig("kill_grace = \"300ms\"\n") // the role is gone: the record keeps what it gave
	if _, err := w.Manager.Inject(ctx, s.ID, "and the tests"); err != nil {
		t.Fatal(err)
	}
	if done := w.wait(s.ID); done.Status() != record.StatusCompleted || done.Turn != 2 {
		t.Fatalf("%s turn %d: %s", done.Status(), done.Turn, done.Error)
	}
	argv := w.argvs()
	if len(argv) != 2 {
		t.Fatalf("%d turns ran: %q", len(argv), argv)
	}
	for i, a := range argv {
		if j := strings.Join(a, " "); !strings.Contains(j, "--effort=low --instructions=Review only. --sandbox=read-only") {
			t.Errorf("turn %d: %q", i+1, j)
		}
	}
	b, err := os.ReadFile(filepath.Join(w.Store.Dir(), "sessions", s.ID, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	json.Unmarshal(b, &rec)
	if rec["role"] != "reviewer" || rec["reasoning_effort"] != "low" || rec["instructions"] != "Review only." || rec["max_cost_usd"] != 5.0 {
		t.Errorf("meta.json: %s", b)
	}
}

func TestSpawnRefusesWhatCannotBeHonoured(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.WriteConfig("[roles.reviewer]\nadapter = \"fake\"\n")
	ctx := context.Background()
	for _, tc := range []struct {
		req  sessions.SpawnRequest
		want []string
	}{
		{sessions.SpawnRequest{Role: "tester"}, []string{`no role "tester"`, "reviewer"}},
		{sessions.SpawnRequest{Adapter: "fake", Model: "mystery-model", MaxCostUSD: 1}, []string{"mystery-model", `[prices."mystery-model"]`}},
		{sessions.SpawnRequest{Adapter: "fake", MaxCostUSD: -1}, []string{"above 0"}},
		{sessions.SpawnRequest{Role: "reviewer", ReasoningEffort: "huge"}, []string{`effort "huge"`, "role reviewer"}},
	} {
		tc.req.Task, tc.req.WorkingDir = "x", w.Work
		_, err := w.Manager.Spawn(ctx, tc.req)
		if !errors.Is(err, config.ErrInvalidRequest) {
			t.Errorf("%+v: want an invalid request, got %v", tc.req, err)
			continue
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%+v: %q does not say %q", tc.req, err, s)
			}
		}
	}
	if ids, _ := w.Store.Ids(); len(ids) != 0 {
		t.Errorf("refused spawns recorded %d sessions", len(ids))
	}
}

// A worker whose cost passes its limit is stopped as it reports the
// usage, with the reason, even if it would go on: nothing needs to watch.
func TestWorkerOverItsCostLimitIsStopped(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	went := filepath.Join(t.TempDir(), "went-on")
	// gpt-5.1-codex: $1.25 per million input tokens.
	w.SetScript(fakeagent.Script{Default: []map[string]any{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		fakeagent.Out(`{"type":"turn.completed","usage":{"input_tokens":1000000,"cached_input_tokens":0,"output_tokens":0}}`),
		// Longer than the wait below: only the stop ends it in time.
		{"sleep_ms": 300000},
		{"run": "touch " + went},
	}})
	s, err := w.Manager.Spawn(context.Background(), sessions.SpawnRequest{Task: "spend", Adapter: "fake", WorkingDir: w.Work, MaxCostUSD: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	done := w.waitFor(s.ID, 2*time.Minute)
	const why = "over its cost limit of $0.50: $1.25 spent"
	if done.Status() != record.StatusKilled || done.Error != why || done.Turns[0].Status() != record.StatusKilled || done.Turns[0].Error != why {
		t.Fatalf("session %s %q, turn %s %q; want both killed, saying %q", done.Status(), done.Error, done.Turns[0].Status(), done.Turns[0].Error, why)
	}
	if _, err := os.Stat(went); err == nil {
		t.Error("the agent went on past its cost limit")
	}
}

// Usage that arrives with the end of a turn (codex's) stops the session
// there: the follow-up queued meanwhile is not delivered, and says why.
func TestCostLimitPassedAtTheEndOfATurnDeliversNothingMore(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "gate")
	w.SetScript(fakeagent.Script{Default: append([]map[string]any{{"wait_file": gate}}, fakeagent.Completes("spent it", 1000000)...)})
	ctx := context.Background()
	s, err := w.Manager.Spawn(ctx, sessions.SpawnRequest{Task: "spend", Adapter: "fake", WorkingDir: w.Work, MaxCostUSD: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Manager.Inject(ctx, s.ID, "now spend more")
	if err != nil || res.Outcome != sessions.InjectQueued {
		t.Fatalf("%+v %v", res, err)
	}
	os.WriteFile(gate, nil, 0o600)
	done := w.wait(s.ID)
	const why = "over its cost limit of $1.00: $1.25 spent"
	if done.Status() != record.StatusKilled || done.Error != why || done.Turn != 1 || done.LastMessage != "spent it" {
		t.Fatalf("%s %q turn %d %q", done.Status(), done.Error, done.Turn, done.LastMessage)
	}
	inbox, err := w.Manager.Inbox(s.ID)
	if err != nil || len(inbox) != 1 || inbox[0].State != record.InboxUndelivered {
		t.Fatalf("inbox %+v %v", inbox, err)
	}
	// A follow-up to it is refused, saying why: it is past its limit
	// already (its supervisor would stop it before its agent started).
	if _, err := w.Manager.Inject(ctx, s.ID, "spend again"); !errors.Is(err, state.ErrOverCostLimit) || !strings.Contains(err.Error(), why) {
		t.Fatalf("a follow-up past the limit: %v", err)
	}
	done = w.wait(s.ID)
	inbox, _ = w.Manager.Inbox(s.ID)
	if done.Status() != record.StatusKilled || done.Error != why || done.Turn != 1 || len(w.Prompts()) != 1 || len(inbox) != 1 {
		t.Fatalf("after a follow-up: %s %q turn %d, %d agent runs, inbox %+v", done.Status(), done.Error, done.Turn, len(w.Prompts()), inbox)
	}
}

func TestDollars(t *testing.T) {
	for v, want := range map[float64]string{0: "$0.00", 0.5: "$0.50", 2: "$2.00", 1.2501: "$1.25", 0.5004: "$0.5004",
		0.00123: "$0.00123", 12.3456: "$12.35", 150.123: "$150.12"} {
		if got := state.Dollars(v, 4); got != want {
			t.Errorf("%v: %s, want %s", v, got, want)
		}
	}
	// The cost past a limit never reads as the limit.
	c := 0.500004
	s := &record.Session{MaxCostUSD: 0.5, CostUSD: &c}
	if got := state.OverCostLimit(s); got != "over its cost limit of $0.50: $0.500004 spent" {
		t.Errorf("%q", got)
	}
}

// argvs lists the command lines the fake agent was run with, in order.
func (w *world) argvs() [][]string {
	var out [][]string
	for _, inv := range w.Invocations() {
		out = append(out, inv.Argv)
	}
	return out
}

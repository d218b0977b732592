package record

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/workspace"
)

func TestCumulativeUsageBecomesPerTurn(t *testing.T) {
	s := &Session{Model: "gpt-5.1-codex"}
	for i, total := range []int64{700, 900, 1100} {
		s.Turns = append(s.Turns, Turn{N: i + 1})
		s.Fold(Event{Type: EventTurnCompleted, Cumulative: true, Usage: &Usage{InputTokens: total, CachedInputTokens: total / 2, OutputTokens: 10 * int64(i+1)}})
	}
	s.Refresh(DefaultPrices())
	wantIn := []int64{700, 200, 200}
	for i, w := range wantIn {
		if s.Turns[i].Usage.InputTokens != w {
			t.Errorf("turn %d input %d, want %d", i+1, s.Turns[i].Usage.InputTokens, w)
		}
	}
	if s.Usage.InputTokens != 1100 || s.Usage.OutputTokens != 30 {
		t.Errorf("session usage %+v", s.Usage)
	}
	// 1100 input of which 550 cached, 30 output, at 1.25/0.125/10 per 1M.
	want := (550*1.25 + 550*0.125 + 30*10) / 1e6
	if s.CostUSD == nil || math.Abs(*s.CostUSD-want) > 1e-12 {
		t.Errorf("cost %v want %v", s.CostUSD, want)
	}
}

// A count below zero (an agent binary that lies, or overflows) counts as
// none, and is not the base the next running total is counted from: the
// next turn's 2,000 was counted as 7,000, from a base of -5,000.
func TestANegativeCountIsNone(t *testing.T) {
	s := &Session{Model: "gpt-5.1-codex"}
	for i, total := range []int64{-5000, 2000} {
		s.Turns = append(s.Turns, Turn{N: i + 1})
		s.Fold(Event{Type: EventTurnCompleted, Cumulative: true, Usage: &Usage{InputTokens: total, OutputTokens: total}})
	}
	s.Refresh(DefaultPrices())
	for i, want := range []int64{0, 2000} {
		if u := s.Turns[i].Usage; u.InputTokens != want || u.OutputTokens != want {
			t.Errorf("turn %d: %+v, want %d in and out", i+1, u, want)
		}
	}
	if s.Usage.InputTokens != 2000 || s.Usage.TotalTokens != 4000 {
		t.Errorf("the session: %+v", s.Usage)
	}
}

func TestUnknownModelHasNoCost(t *testing.T) {
	s := &Session{Model: "some-local-model", Turns: []Turn{{N: 1}}}
	s.Fold(Event{Type: EventTurnCompleted, Usage: &Usage{InputTokens: 5}})
	s.Refresh(DefaultPrices())
	if s.CostUSD != nil {
		t.Fatalf("cost %v for an unknown model", *s.CostUSD)
	}
	if p, ok := DefaultPrices().Lookup("claude-sonnet-4-5-20250929"); !ok || p.Output != 15 {
		t.Fatalf("dated model name not priced: %v %v", p, ok)
	}
}

// The built-in table prices the models the adapters choose by default and
// the ones people name: codex's GPT-5 family and Claude Code's aliases and
// ids, dated or not; the prices are the vendors' list prices.
func TestDefaultPricesCoverTheCurrentModels(t *testing.T) {
	for model, want := range map[string]Price{
		"gpt-5.1-codex-mini":         {Input: 0.25, CachedInput: 0.025, Output: 2},
		"gpt-5.1-codex":              {Input: 1.25, CachedInput: 0.125, Output: 10},
		"gpt-5.1-codex-max":          {Input: 1.25, CachedInput: 0.125, Output: 10},
		"gpt-5-codex":                {Input: 1.25, CachedInput: 0.125, Output: 10},
		"gpt-5.2":                    {Input: 1.75, CachedInput: 0.175, Output: 14},
		"codex-mini-latest":          {Input: 1.5, CachedInput: 0.375, Output: 6},
		"sonnet":                     {Input: 3, CachedInput: 0.3, Output: 15},
		"opus":                       {Input: 5, CachedInput: 0.5, Output: 25},
		"haiku":                      {Input: 1, CachedInput: 0.1, Output: 5},
		"claude-opus-4-5-20251101":   {Input: 5, CachedInput: 0.5, Output: 25},
		"claude-opus-4-1-20250805":   {Input: 15, CachedInput: 1.5, Output: 75},
		"claude-sonnet-4-20250514":   {Input: 3, CachedInput: 0.3, Output: 15},
		"Claude-Haiku-4-5":           {Input: 1, CachedInput: 0.1, Output: 5},
		"claude-3-5-haiku-20241022":  {Input: 0.8, CachedInput: 0.08, Output: 4},
		"claude-sonnet-4-5-20250929": {Input: 3, CachedInput: 0.3, Output: 15},
	} {
		if got, ok := DefaultPrices().Lookup(model); !ok || got != want {
			t.Errorf("%s: %+v (known %v), want %+v", model, got, ok, want)
		}
	}
}

func TestFailureReason(t *testing.T) {
	s := &Session{Turns: []Turn{{N: 1}}}
	s.Fold(Event{Type: EventError, Text: "stream cut"})
	if s.Turns[0].AgentError != "stream cut" || s.Turns[0].AgentFailed {
		t.Fatalf("%+v", s.Turns[0])
	}
	s.Fold(Event{Type: EventTurnFailed, Text: "boom"})
	if !s.Turns[0].AgentFailed || s.Turns[0].Error != "boom" {
		t.Fatalf("%+v", s.Turns[0])
	}
}

// A live claude process reports total_cost_usd as a running total over the
// turns it served; a resumed process starts again from zero.
func TestProcessCostBecomesPerTurn(t *testing.T) {
	s := &Session{}
	cost := func(c float64) *float64 { return &c }
	for i, tc := range []struct {
		live  bool
		total float64
		want  float64
	}{{false, 0.5, 0.5}, {true, 0.75, 0.25}, {true, 1.0, 0.25}, {false, 0.125, 0.125}} {
		s.Turns = append(s.Turns, Turn{N: i + 1, Live: tc.live})
		s.Fold(Event{Type: EventTurnCompleted, Usage: &Usage{InputTokens: 1}, CostUSD: cost(tc.total), ProcessCost: true})
		if got := s.Turns[i].CostUSD; got == nil || *got != tc.want {
			t.Fatalf("turn %d cost %v, want %v", i+1, got, tc.want)
		}
	}
	s.Refresh(DefaultPrices())
	if *s.CostUSD != 1.125 {
		t.Fatalf("session cost %v", *s.CostUSD)
	}
}

// claude's modelUsage, which counts its subagents' calls, is a running
// total over the turns of one live process too; a resumed process starts
// again from zero.
func TestProcessUsageBecomesPerTurn(t *testing.T) {
	s := &Session{}
	for i, tc := range []struct {
		live          bool
		input, output int64
		want          Usage
	}{
		{false, 9200, 780, Usage{InputTokens: 9200, OutputTokens: 780, TotalTokens: 9980}},
		{true, 10500, 800, Usage{InputTokens: 1300, OutputTokens: 20, TotalTokens: 1320}},
		{false, 400, 40, Usage{InputTokens: 400, OutputTokens: 40, TotalTokens: 440}},
	} {
		s.Turns = append(s.Turns, Turn{N: i + 1, Live: tc.live})
		s.Fold(Event{Type: EventTurnCompleted, Usage: &Usage{InputTokens: tc.input, OutputTokens: tc.output}, ProcessUsage: true})
		if got := s.Turns[i].Usage; got != tc.want {
			t.Fatalf("turn %d usage %+v, want %+v", i+1, got, tc.want)
		}
	}
	s.Refresh(DefaultPrices())
	if s.Usage.InputTokens != 9200+1300+400 || s.Usage.OutputTokens != 780+20+40 {
		t.Fatalf("session usage %+v", s.Usage)
	}
	if c := s.Clone(); c.Turns[0].ProcessUsage == s.Turns[0].ProcessUsage {
		t.Fatal("a clone shares a turn's process usage")
	}
}

// The status's own methods (in sessions/internal/statusfield, which cannot
// import the record) agree with the record's names for the statuses.
func TestStatusesSayWhetherFinished(t *testing.T) {
	for _, st := range append(Statuses, StatusInterrupted) {
		finished := st == StatusCompleted || st == StatusFailed || st == StatusKilled
		if st.Finished() != finished {
			t.Errorf("%s.Finished() = %v, want %v", st, st.Finished(), finished)
		}
		want := string(st)
		if st == StatusKilled {
			want = "was killed"
		}
		if st.Ended() != want {
			t.Errorf("%s.Ended() = %q, want %q", st, st.Ended(), want)
		}
	}
}

// A record's status, a field the record embeds, is its JSON's own
// "status", where it always was (after "task"), and decodes back.
func TestStatusIsTheRecordsOwnJSONField(t *testing.T) {
	s := statusfield.With(Session{ID: "a1", Task: "t", Adapter: "codex",
		Turns: []Turn{statusfield.With(Turn{N: 1}, StatusFailed)}}, StatusRunning)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"task":"t","status":"running","adapter":"codex"`, `"exit_code":null,"status":"failed","usage":`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the record's JSON has no %s:\n%s", want, b)
		}
	}
	var back Session
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Status() != StatusRunning || len(back.Turns) != 1 || back.Turns[0].Status() != StatusFailed {
		t.Errorf("decoded back: %s with turns %+v", back.Status(), back.Turns)
	}
}

// CHANGES says what became of a worker's change, a commit zwarm could
// not make included: never "–", which is a change not measured yet.
func TestChangesText(t *testing.T) {
	ws := func(w Workspace) *Workspace { return &w }
	settled := func(w *Workspace, turns int, st Status) Session {
		s := statusfield.With(Session{ID: "a1", Workspace: w}, st)
		for i := 1; i <= turns; i++ {
			s.Turns = append(s.Turns, Turn{N: i})
		}
		return s
	}
	for want, s := range map[string]Session{
		"in place":         settled(nil, 1, StatusCompleted),
		"–":                statusfield.With(Session{ID: "a1", Workspace: ws(Workspace{State: WorkspaceReady}), Owner: &proc.Ref{PID: 1}}, StatusRunning),
		"uncommitted":      settled(ws(Workspace{State: WorkspaceReady}), 1, StatusCompleted),
		"not committed":    settled(ws(Workspace{State: WorkspaceReady, Error: "stage the worker's changes: context deadline exceeded"}), 1, StatusCompleted),
		"+3 -1 in 2 files": settled(ws(Workspace{State: WorkspaceReady, Committed: 1, Changes: &workspace.Stat{Files: 2, Added: 3, Deleted: 1}}), 1, StatusCompleted),
	} {
		if got := s.ChangesText(); got != want {
			t.Errorf("%+v: %q, want %q", s.Workspace, got, want)
		}
	}
}

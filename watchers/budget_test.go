package watchers

import (
	"github.com/zwarm/zwarm/sessions/record"
	"strings"
	"testing"
)

func TestBudgetWarnsWithWhatIsLeftThenAborts(t *testing.T) {
	w := newBudget(DefaultConfig().Budget)
	h := newHistory("fix the bug")
	h.v.Limits = Limits{MaxSteps: 10, MaxCostUSD: 2, MaxTokens: 100_000}
	for i := 0; i < 7; i++ {
		h.step("", call("wait", map[string]any{"n": i}))
		ask(t, w, h, Continue)
	}
	h.step("", call("wait", map[string]any{}))
	v := ask(t, w, h, Nudge)
	if !strings.Contains(v.Message, "8 of 10 steps used, 2 left") {
		t.Errorf("message %q", v.Message)
	}
	ask(t, w, h, Continue) // once
	// Tokens and cost count the model and its workers together.
	h.v.Usage.TotalTokens, h.v.WorkerUsage.TotalTokens = 30_000, 55_000
	model, workers := 0.5, 1.2
	h.v.CostUSD, h.v.WorkerCostUSD = &model, &workers
	v = ask(t, w, h, Nudge)
	if !strings.Contains(v.Message, "85k of 100k tokens used, 15k left") || !strings.Contains(v.Message, "$1.70 of $2.00 spent, $0.30 left") {
		t.Errorf("message %q", v.Message)
	}
	workers = 1.6
	v = ask(t, w, h, Abort)
	if v.Message != "the run spent $2.10, its limit is $2.00" {
		t.Errorf("message %q", v.Message)
	}
}

func TestBudgetQuietUnderItsShare(t *testing.T) {
	w := newBudget(DefaultConfig().Budget)
	h := newHistory("fix the bug")
	h.v.Limits = Limits{MaxSteps: 10, MaxTokens: 100_000, MaxWorkers: 2}
	h.v.Usage.TotalTokens = 79_000
	for i := 0; i < 7; i++ {
		h.step("", call("wait", map[string]any{"n": i}))
		ask(t, w, h, Continue)
	}
	h.worker("w1")
	h.worker("w2")
	ask(t, w, h, Continue)
	// No limits: nothing to warn about, however much is used.
	w = newBudget(DefaultConfig().Budget)
	h.v.Limits = Limits{}
	h.v.Usage.TotalTokens = 1e9
	ask(t, w, h, Continue)
}

func TestBudgetTooManyWorkers(t *testing.T) {
	w := newBudget(DefaultConfig().Budget)
	h := newHistory("fix the bug")
	h.v.Limits.MaxWorkers = 2
	var ws []*record.Session
	for _, id := range []string{"a", "b", "c"} {
		ws = append(ws, h.worker(id))
	}
	v := ask(t, w, h, Nudge)
	if !strings.Contains(v.Message, "3 workers are running, more than the 2 allowed") {
		t.Errorf("message %q", v.Message)
	}
	ask(t, w, h, Continue)
	h.worker("d")
	ask(t, w, h, Nudge) // one more
	h.end(ws[0], record.StatusCompleted)
	h.end(ws[1], record.StatusCompleted)
	ask(t, w, h, Continue)
	// [watchers.budget] max_workers overrides the run's.
	cfg := DefaultConfig().Budget
	cfg.MaxWorkers = 1
	ask(t, newBudget(cfg), h, Nudge)
}

// A budget watcher new to a resumed run does not warn again about a limit
// it warned about before the run stopped, however far the run got since;
// a limit raised on resume is a new one.
func TestBudgetRemembersItsWarningsAcrossAResume(t *testing.T) {
	h := newHistory("fix the bug")
	h.v.Limits = Limits{MaxSteps: 10}
	for i := 0; i < 8; i++ {
		h.step("", call("wait", map[string]any{"n": i}))
	}
	said := ask(t, newBudget(DefaultConfig().Budget), h, Nudge)
	h.step("", call("wait", map[string]any{}))
	h.v.Nudges = []Nudged{{Step: 9, Watcher: "budget", Message: said.Message}}
	ask(t, newBudget(DefaultConfig().Budget), h, Continue)

	h.v.Limits.MaxSteps = 11 // raised: 9 of 11 is past its share too
	if v := ask(t, newBudget(DefaultConfig().Budget), h, Nudge); !strings.Contains(v.Message, "9 of 11 steps used") {
		t.Errorf("message %q", v.Message)
	}
}

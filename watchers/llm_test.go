package watchers

import (
	"context"
	"errors"
	"github.com/zwarm/zwarm/sessions/record"
	"strings"
	"sync"
	"testing"
)

// reviewer answers reviews from a script and keeps the prompts.
type reviewer struct {
	mu      sync.Mutex
	answers []string
	err     error
	prompts []Prompt
}

func (r *reviewer) Complete(_ context.Context, p Prompt) (Completion, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prompts = append(r.prompts, p)
	if r.err != nil {
		return Completion{}, r.err
	}
	a := r.answers[0]
	r.answers = r.answers[1:]
	return Completion{Text: a, Usage: record.Usage{InputTokens: 1000, OutputTokens: 100, TotalTokens: 1100}}, nil
}

func llmCfg() LLMConfig {
	c := DefaultConfig().LLM
	c.Enabled, c.Every = true, 3
	return c
}

func TestLLMConcernEveryNSteps(t *testing.T) {
	m := &reviewer{answers: []string{
		"Sure: ```json\n{\"verdict\": \"concern\", \"reason\": \"It runs the tests itself instead of delegating.\"}\n```",
		`{"verdict":"problem","reason":"It deletes the repository."}`,
	}}
	w := newLLM(llmCfg(), m, record.DefaultPrices())
	h := newHistory("add a parser")
	h.step("plan", call("delegate", map[string]any{"task": "parser"}))
	ask(t, w, h, Continue)
	h.step("", callOut("exec_command", map[string]any{"cmd": "go test ./..."}, "ok"))
	ask(t, w, h, Continue)
	h.step("", callOut("exec_command", map[string]any{"cmd": "go test ./..."}, "ok"))
	v := ask(t, w, h, Nudge)
	if v.Message != "A reviewer of this run has a concern: It runs the tests itself instead of delegating." {
		t.Errorf("message %q", v.Message)
	}
	if v.Cost == nil || v.Cost.Model != "gpt-5.1" || v.Cost.Usage.TotalTokens != 1100 || v.Cost.CostUSD == nil {
		t.Errorf("cost %+v", v.Cost)
	}
	p := m.prompts[0]
	if p.Model != "gpt-5.1" || !strings.Contains(p.Input, "Task: add a parser") || !strings.Contains(p.Input, `call exec_command {"cmd":"go test ./..."} -> ok`) ||
		!strings.Contains(p.Instructions, `"verdict"`) {
		t.Errorf("prompt %+v", p)
	}
	ask(t, w, h, Continue) // step 3 was reviewed
	for i := 0; i < 3; i++ {
		h.step("", call("wait", map[string]any{"i": i}))
	}
	// on_problem decides what a problem does.
	w.cfg.OnProblem = Pause
	ask(t, w, h, Pause)
	if len(m.prompts) != 2 {
		t.Errorf("%d reviews", len(m.prompts))
	}
}

func TestLLMOkOrFailureIsQuiet(t *testing.T) {
	for _, m := range []*reviewer{
		{answers: []string{`{"verdict":"ok","reason":"fine"}`}},
		{answers: []string{"I think it is fine."}},
		{answers: []string{`{"verdict": "maybe"}`}},
		{err: errors.New("model API error 500")},
	} {
		w := newLLM(llmCfg(), m, nil)
		h := newHistory("add a parser")
		ask(t, w, h, Continue)
		for i := 0; i < 3; i++ {
			h.step("", call("wait", map[string]any{"i": i}))
		}
		ask(t, w, h, Continue)
		if len(m.prompts) != 1 {
			t.Errorf("%d reviews", len(m.prompts))
		}
	}
}

package watchers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
)

// Model is a language model the llm watcher asks for a review. The
// orchestrator implements it with its own client, so the review goes
// where the run's calls go and is counted in the run's cost.
type Model interface {
	Complete(ctx context.Context, p Prompt) (Completion, error)
}

// Prompt is one model call: instructions and the text to answer.
type Prompt struct {
	Model        string
	Instructions string
	Input        string
}

// Completion is the model's answer and what it cost in tokens.
type Completion struct {
	Text  string
	Usage record.Usage
}

// reviewInstructions ask for a verdict the watcher can read.
const reviewInstructions = `You review the trajectory of an orchestrator: a model that breaks a coding task down, delegates the pieces to worker agents, waits for them, verifies their work and finishes.
Decide whether it is on track. Answer with one JSON object and nothing else:
{"verdict": "ok" | "concern" | "problem", "reason": "one or two sentences of advice addressed to the orchestrator"}
"concern": it wastes steps or money, strays from the task, or skips verification. "problem": it is stuck in a loop, works against the task, or is about to do damage.`

// llm has a model review a compact trajectory every few steps. Its own
// failure (an API error, an answer it cannot read) counts as ok.
type llm struct {
	cfg    LLMConfig
	model  Model
	prices record.Prices
	last   int // the step last reviewed
	looked bool
}

func newLLM(cfg LLMConfig, m Model, prices record.Prices) *llm {
	return &llm{cfg: cfg, model: m, prices: prices}
}

func (l *llm) Name() string { return "llm" }

func (l *llm) Check(ctx context.Context, v *RunView) Verdict {
	done := v.Step - 1
	if !l.looked {
		// A resumed run's last step was reviewed before it stopped.
		l.looked, l.last = true, done
	}
	if done < l.cfg.Every || done%l.cfg.Every != 0 || done == l.last {
		return Verdict{}
	}
	l.last = done
	name := l.cfg.Model
	if name == "" {
		name = v.Model
	}
	c, err := l.model.Complete(ctx, Prompt{Model: name, Instructions: reviewInstructions, Input: Trajectory(v, l.cfg.Steps)})
	var cost *ModelCost
	if !c.Usage.IsZero() {
		cost = &ModelCost{Model: name, Usage: c.Usage, CostUSD: l.prices.Cost(name, c.Usage)}
	}
	if err != nil {
		return Verdict{Cost: cost, Message: fmt.Sprintf("the review failed (%v); counted as ok", err)}
	}
	verdict, reason := readReview(c.Text)
	switch verdict {
	case "concern":
		return Verdict{Action: l.cfg.OnConcern, Message: "A reviewer of this run has a concern: " + reason, Cost: cost}
	case "problem":
		return Verdict{Action: l.cfg.OnProblem, Message: "A reviewer of this run sees a problem: " + reason, Cost: cost}
	}
	return Verdict{Cost: cost}
}

// readReview reads the JSON verdict, wherever it is in the text; anything
// else reads as ok.
func readReview(text string) (verdict, reason string) {
	i, j := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if i < 0 || j < i {
		return "ok", ""
	}
	var r struct {
		Verdict string `json:"verdict"`
		Reason  string `json:"reason"`
	}
	if json.Unmarshal([]byte(text[i:j+1]), &r) != nil {
		return "ok", ""
	}
	r.Verdict = strings.ToLower(strings.TrimSpace(r.Verdict))
	if r.Verdict != "concern" && r.Verdict != "problem" {
		return "ok", ""
	}
	if strings.TrimSpace(r.Reason) == "" {
		r.Reason = "(no reason given)"
	}
	return r.Verdict, cut(r.Reason, 600)
}

// Trajectory is a compact account of a run for a reviewer: the task, the
// budget, the workers, and the last steps (what the model said, the
// calls it made and what they returned), each clipped.
func Trajectory(v *RunView, steps int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task: %s\n", render.Clip(v.Task, 1000))
	cost, _ := v.Cost()
	fmt.Fprintf(&b, "Steps done: %d", v.Step-1)
	if v.Limits.MaxSteps > 0 {
		fmt.Fprintf(&b, " of %d", v.Limits.MaxSteps)
	}
	fmt.Fprintf(&b, "; tokens %s; cost %s\n", render.Tokens(v.Tokens()), render.Money(cost))
	byStatus := map[record.Status]int{}
	for _, s := range v.Workers {
		byStatus[s.Status()]++
	}
	fmt.Fprintf(&b, "Workers: %d running, %d completed, %d failed, %d killed\n", byStatus[record.StatusRunning]+byStatus[record.StatusPending],
		byStatus[record.StatusCompleted], byStatus[record.StatusFailed], byStatus[record.StatusKilled])
	from := v.Step - steps
	mi, ci := v.messagesFrom(from), v.callsFrom(from)
	for step := max(from, 1); step < v.Step; step++ {
		fmt.Fprintf(&b, "\nStep %d:\n", step)
		for ; mi < len(v.Messages) && v.Messages[mi].Step == step; mi++ {
			m := v.Messages[mi]
			fmt.Fprintf(&b, "  %s: %s\n", m.Kind, render.Clip(m.Text, 300))
		}
		for ; ci < len(v.Calls) && v.Calls[ci].Step == step; ci++ {
			c := v.Calls[ci]
			mark := ""
			if c.IsError {
				mark = " (error)"
			}
			fmt.Fprintf(&b, "  call %s %s -> %s%s\n", c.Name, render.Clip(string(c.Args), 200), render.Clip(c.Output, 300), mark)
		}
	}
	return b.String()
}

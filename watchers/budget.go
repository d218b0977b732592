package watchers

import (
	"context"
	"fmt"
	"strings"

	"github.com/zwarm/zwarm/sessions/render"
)

// budget tells the run what is left of its steps, tokens and cost past a
// share of each limit, aborts it past a limit, and nudges when more
// workers run than allowed.
type budget struct {
	cfg     BudgetConfig
	warned  map[string]bool
	crowded int  // the number of running workers last reported
	looked  bool // the first check is over
}

func newBudget(cfg BudgetConfig) *budget { return &budget{cfg: cfg, warned: map[string]bool{}} }

func (b *budget) Name() string { return "budget" }

func (b *budget) Check(_ context.Context, v *RunView) Verdict {
	lim := v.Limits
	if !b.looked {
		b.looked = true
		b.recall(v)
	}
	used := v.Step - 1
	tokens := v.Tokens()
	cost, _ := v.Cost()
	switch {
	case lim.MaxSteps > 0 && used >= lim.MaxSteps:
		return Verdict{Action: Abort, Message: fmt.Sprintf("the run used all of its %d steps", lim.MaxSteps)}
	case lim.MaxTokens > 0 && tokens >= lim.MaxTokens:
		return Verdict{Action: Abort, Message: fmt.Sprintf("the run used %s tokens, its limit is %s", render.Tokens(tokens), render.Tokens(lim.MaxTokens))}
	case lim.MaxCostUSD > 0 && cost >= lim.MaxCostUSD:
		return Verdict{Action: Abort, Message: fmt.Sprintf("the run spent %s, its limit is %s", render.Money(cost), render.Money(lim.MaxCostUSD))}
	}
	var left []string
	warn := func(kind string, over bool, text string) {
		if over && !b.warned[kind] {
			b.warned[kind] = true
			left = append(left, text)
		}
	}
	share := b.cfg.WarnAt
	warn("steps", lim.MaxSteps > 0 && float64(used) >= share*float64(lim.MaxSteps),
		fmt.Sprintf("%d of %d steps used, %d left", used, lim.MaxSteps, lim.MaxSteps-used))
	warn("tokens", lim.MaxTokens > 0 && float64(tokens) >= share*float64(lim.MaxTokens),
		fmt.Sprintf("%s of %s tokens used, %s left", render.Tokens(tokens), render.Tokens(lim.MaxTokens), render.Tokens(lim.MaxTokens-tokens)))
	warn("cost", lim.MaxCostUSD > 0 && cost >= share*lim.MaxCostUSD,
		fmt.Sprintf("%s of %s spent, %s left", render.Money(cost), render.Money(lim.MaxCostUSD), render.Money(lim.MaxCostUSD-cost)))
	if len(left) > 0 {
		return Verdict{Action: Nudge, Message: "Budget: " + strings.Join(left, "; ") +
			". Wrap up: start nothing big, collect what the workers did, verify it and call finish."}
	}
	allowed := b.cfg.MaxWorkers
	if allowed == 0 {
		allowed = lim.MaxWorkers
	}
	running := v.running()
	if allowed == 0 || running <= allowed {
		b.crowded = 0
		return Verdict{}
	}
	if running > b.crowded {
		b.crowded = running
		return Verdict{Action: Nudge, Message: fmt.Sprintf("%d workers are running, more than the %d allowed: "+
			"wait for some to finish or end those you no longer need (end_session) before delegating more.", running, allowed)}
	}
	return Verdict{}
}

// recall takes as given the warnings this watcher gave a resumed run
// before it stopped, about the limits it has now: a run is told once what
// is left of a limit, whichever process tells it.
func (b *budget) recall(v *RunView) {
	lim := v.Limits
	about := map[string]string{
		"steps":  fmt.Sprintf(" of %d steps used", lim.MaxSteps),
		"tokens": fmt.Sprintf(" of %s tokens used", render.Tokens(lim.MaxTokens)),
		"cost":   fmt.Sprintf(" of %s spent", render.Money(lim.MaxCostUSD)),
	}
	for _, n := range v.Nudges {
		if n.Watcher != b.Name() {
			continue
		}
		for kind, words := range about {
			if strings.Contains(n.Message, words) {
				b.warned[kind] = true
			}
		}
	}
}

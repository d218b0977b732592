package watchers

import (
	"context"
	"fmt"
	"github.com/zwarm/zwarm/sessions/record"
	"io"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"time"
)

// RunWatcher is one run watcher. Check must return soon after ctx ends;
// the engine never calls it again before it returned, so it may keep
// state between calls without locking.
type RunWatcher interface {
	Name() string
	Check(ctx context.Context, v *RunView) Verdict
}

// Verdict is a watcher's answer about the coming step.
type Verdict struct {
	Watcher string
	Action  Action
	Message string
	// Priority is the watcher's configured priority: it breaks ties of
	// severity.
	Priority int
	// Cost is what the watcher spent calling a model for this answer.
	Cost *ModelCost
}

// ModelCost is a watcher's model call.
type ModelCost struct {
	Watcher string
	Model   string
	Usage   record.Usage
	CostUSD *float64 // nil: the model's price is unknown
}

// Problem is a watcher that did not answer: it panicked (and is not asked
// again), overran its timeout, or was still busy with an earlier check.
type Problem struct {
	Watcher string
	Kind    string // "panic", "timeout" or "busy"
	Text    string
}

func (p Problem) Error() string {
	return fmt.Sprintf("watcher %s %s; skipped", p.Watcher, p.Text)
}

// Report is the engine's answer before a step.
type Report struct {
	// Verdicts are the answers other than continue, the winner first:
	// the most severe, ties to the higher priority.
	Verdicts []Verdict
	Problems []Problem
	// Costs are the model calls the watchers made.
	Costs []ModelCost
}

// Winner is the verdict that decides the step: continue if none.
func (r Report) Winner() Verdict {
	if len(r.Verdicts) == 0 {
		return Verdict{Action: Continue}
	}
	return r.Verdicts[0]
}

// Options of an Engine.
type Options struct {
	// Model serves the llm watcher; without one the llm watcher is off.
	Model Model
	// Prices price the llm watcher's calls.
	Prices record.Prices
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
}

// Engine runs the run watchers before each step. Make one per run: the
// watchers remember what they reported. It is safe for concurrent use,
// though a run asks it once per step.
type Engine struct {
	log     *slog.Logger
	timeout time.Duration
	wg      sync.WaitGroup // checks in flight, overrun ones included

	mu      sync.Mutex
	entries []*entry
}

type entry struct {
	w        RunWatcher
	priority int
	timeout  time.Duration
	busy     int    // the step of a check still running; 0: idle
	broken   string // why it is no longer asked (it panicked)
}

// New returns an engine with the enabled run watchers of cfg (nil: the
// defaults).
func New(cfg *Config, opt Options) *Engine {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	e := &Engine{log: opt.Log, timeout: cfg.Timeout.Duration}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	add := func(c Common, w RunWatcher) {
		if c.Enabled {
			e.Add(w, c.Priority, 0)
		}
	}
	add(cfg.Progress.Common, newProgress(cfg.Progress))
	add(cfg.Budget.Common, newBudget(cfg.Budget))
	if len(cfg.Scope.Keywords) > 0 {
		add(cfg.Scope.Common, newScope(cfg.Scope))
	}
	if len(cfg.Pattern.Rules) > 0 {
		add(cfg.Pattern.Common, newPattern(cfg.Pattern))
	}
	add(cfg.Delegation.Common, newDelegation(cfg.Delegation))
	add(cfg.DelegationReminder.Common, newReminder(cfg.DelegationReminder))
	add(cfg.Quality.Common, newQuality(cfg.Quality))
	if cfg.LLM.Enabled && opt.Model != nil {
		e.Add(newLLM(cfg.LLM, opt.Model, opt.Prices), cfg.LLM.Priority, cfg.LLM.Timeout.Duration)
	}
	return e
}

// Add adds a watcher with its priority and timeout (0: the engine's).
func (e *Engine) Add(w RunWatcher, priority int, timeout time.Duration) {
	if timeout <= 0 {
		timeout = e.timeout
	}
	e.mu.Lock()
	e.entries = append(e.entries, &entry{w: w, priority: priority, timeout: timeout})
	e.mu.Unlock()
}

// Names lists the watchers the engine asks.
func (e *Engine) Names() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, 0, len(e.entries))
	for _, en := range e.entries {
		out = append(out, en.w.Name())
	}
	return out
}

type outcome struct {
	v       Verdict
	problem *Problem
}

// Check asks every watcher about the step v.Step, concurrently, and waits
// for each until it answers or its timeout passes: a watcher that overran
// is reported and skipped (its check goes on in the background until it
// notices its context ended; it is not asked again meanwhile), one that
// panicked is reported and never asked again.
func (e *Engine) Check(ctx context.Context, v *RunView) Report {
	var rep Report
	e.mu.Lock()
	var picked []*entry
	for _, en := range e.entries {
		switch {
		case en.broken != "":
		case en.busy != 0:
			rep.Problems = append(rep.Problems, Problem{Watcher: en.w.Name(), Kind: "busy",
				Text: fmt.Sprintf("is still busy with its check before step %d", en.busy)})
		default:
			en.busy = max(v.Step, 1)
			picked = append(picked, en)
		}
	}
	e.mu.Unlock()
	results := make(chan outcome, len(picked))
	var collectors sync.WaitGroup
	for _, en := range picked {
		collectors.Add(1)
		go func() {
			defer collectors.Done()
			results <- e.ask(ctx, en, v)
		}()
	}
	collectors.Wait()
	close(results)
	for o := range results {
		switch {
		case o.problem != nil:
			rep.Problems = append(rep.Problems, *o.problem)
			e.log.Warn("watchers: a watcher did not answer", "watcher", o.problem.Watcher, "kind", o.problem.Kind, "text", o.problem.Text)
		default:
			if o.v.Cost != nil {
				c := *o.v.Cost
				c.Watcher = o.v.Watcher
				rep.Costs = append(rep.Costs, c)
			}
			if o.v.Action.Severity() > 0 {
				rep.Verdicts = append(rep.Verdicts, o.v)
			} else if o.v.Message != "" {
				e.log.Info("watchers: "+o.v.Watcher, "step", v.Step, "note", o.v.Message)
			}
		}
	}
	sortVerdicts(rep.Verdicts)
	sort.Slice(rep.Problems, func(i, j int) bool { return rep.Problems[i].Watcher < rep.Problems[j].Watcher })
	return rep
}

// ask runs one watcher's check and waits for it at most its timeout.
func (e *Engine) ask(ctx context.Context, en *entry, v *RunView) outcome {
	name := en.w.Name()
	done := make(chan outcome, 1)
	cctx, cancel := context.WithTimeout(ctx, en.timeout)
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer cancel()
		o := e.run(cctx, en, v)
		// Idle again before the answer is taken, so the next step asks it.
		e.release(en)
		done <- o
	}()
	t := time.NewTimer(en.timeout)
	defer t.Stop()
	select {
	case o := <-done:
		return o
	case <-t.C:
		return outcome{problem: &Problem{Watcher: name, Kind: "timeout", Text: fmt.Sprintf("did not answer within %s", en.timeout)}}
	}
}

// run calls the watcher, turning a panic into a problem.
func (e *Engine) run(ctx context.Context, en *entry, v *RunView) (o outcome) {
	name := en.w.Name()
	defer func() {
		if p := recover(); p != nil {
			e.mu.Lock()
			en.broken = fmt.Sprint(p)
			e.mu.Unlock()
			e.log.Error("watchers: a watcher panicked", "watcher", name, "panic", p, "stack", string(debug.Stack()))
			o = outcome{problem: &Problem{Watcher: name, Kind: "panic", Text: fmt.Sprintf("panicked (%v) and is off for the rest of the run", p)}}
		}
	}()
	verdict := en.w.Check(ctx, v)
	verdict.Watcher, verdict.Priority = name, en.priority
	if verdict.Action == "" {
		verdict.Action = Continue
	}
	return outcome{v: verdict}
}

func (e *Engine) release(en *entry) {
	e.mu.Lock()
	en.busy = 0
	e.mu.Unlock()
}

// Close waits for checks that overran their timeout to return. Their
// contexts have ended; a watcher that ignores its context keeps Close
// waiting.
func (e *Engine) Close() { e.wg.Wait() }

// sortVerdicts puts the most severe first, ties to the higher priority,
// then by name so the order never depends on which answered first.
func sortVerdicts(vs []Verdict) {
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if sa, sb := a.Action.Severity(), b.Action.Severity(); sa != sb {
			return sa > sb
		}
		if a.Priority != b.Priority {
			return a.Priority > b.Priority
		}
		return a.Watcher < b.Watcher
	})
}

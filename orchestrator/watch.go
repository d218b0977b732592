package orchestrator

import (
	"context"
	"fmt"
	"sync"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/watchers"
)

// WatcherAccount is the key of run.json's worker_accounts under which the
// model calls of a watcher are counted: "watcher:llm".
const WatcherAccount = "watcher:"

// Watch puts the watchers of cfg (nil: the defaults) on the run; call it
// between Start (or Resume) and Execute, and stop after Execute.
//
// The run watchers are asked before every step (a Guard already set is
// asked too). The worker watchers follow the run's workers through a
// subscription: their alerts reach the model as nudges naming the worker,
// and cost_guard stops a worker past its cap itself. The llm watcher calls
// the run's model client; what it spends is counted in the run's cost and
// limits, in worker_accounts under "watcher:llm". A watcher that panics
// or overruns its timeout is skipped and written to events.jsonl as a
// notice.
//
// stop ends the worker watchers and waits for them and for any check
// still running.
func (r *Run) Watch(ctx context.Context, cfg *watchers.Config) (stop func()) {
	if cfg == nil {
		cfg = watchers.DefaultConfig()
	}
	engine := watchers.New(cfg, watchers.Options{Model: reviewModel{r.opt.Client}, Prices: r.prices, Log: r.opt.Log})
	var killer watchers.Killer
	if k, ok := r.opt.Sessions.(watchers.Killer); ok {
		killer = k
	}
	workers := watchers.NewWorkers(cfg, watchers.WorkerOptions{Killer: killer, Log: r.opt.Log, Notify: r.opt.Notify})
	g := &watcherGuard{engine: engine, cfg: cfg, workers: workers, run: r}
	if _, none := r.opt.Guard.(NoGuard); !none && r.opt.Guard != nil {
		g.prev = r.opt.Guard
	}
	r.opt.Guard = g

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		err := workers.Watch(ctx, r.opt.Sessions, listing.Options{Source: record.RunSource(r.rec.ID)})
		if err != nil {
			r.opt.Log.Error("orchestrator: the worker watchers stopped", "run", r.rec.ID, "err", err)
			g.mu.Lock()
			g.failed = err
			g.mu.Unlock()
		}
	}()
	go func() {
		defer wg.Done()
		for a := range workers.Alerts() {
			r.opt.Log.Info("orchestrator: worker alert", "run", r.rec.ID, "watcher", a.Watcher, "session", a.SessionID, "reason", a.Reason)
			g.mu.Lock()
			g.alerts = append(g.alerts, a)
			g.mu.Unlock()
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			engine.Close()
		})
	}
}

// watched records what the watchers did before a step: the model calls
// they made join the run's cost, the watchers that did not answer are
// written as notices. It runs on the run's goroutine.
func (g *watcherGuard) watched(step int, rep watchers.Report) {
	r := g.run
	for _, p := range rep.Problems {
		r.emit(runs.Event{Type: runs.EventNotice, Step: step, Watcher: p.Watcher, Text: p.Error()})
	}
	if len(rep.Costs) == 0 {
		return
	}
	r.mu.Lock()
	for _, c := range rep.Costs {
		key := WatcherAccount + c.Watcher
		a, ok := r.rec.Accounts[key]
		if !ok {
			zero := 0.0
			a.CostUSD = &zero
		}
		a.Usage = a.Usage.Add(c.Usage)
		if c.CostUSD == nil {
			a.CostUSD = nil
		} else if a.CostUSD != nil {
			sum := record.RoundCost(*a.CostUSD + *c.CostUSD)
			a.CostUSD = &sum
		}
		r.rec.Accounts[key] = a
	}
	r.mu.Unlock()
	for _, c := range rep.Costs {
		if c.CostUSD == nil && !g.unpriced[c.Model] {
			if g.unpriced == nil {
				g.unpriced = map[string]bool{}
			}
			g.unpriced[c.Model] = true
			r.emit(runs.Event{Type: runs.EventNotice, Step: step, Watcher: c.Watcher,
				Text: fmt.Sprintf("the price of model %s is unknown, so the %s watcher's calls are not counted in the cost; add [prices.%q] to config.toml", c.Model, c.Watcher, c.Model)})
		}
	}
}

package watchers

import (
	"context"
	"fmt"
	"github.com/zwarm/zwarm/sessions/record"
	"strings"
	"testing"
)

// benchHistory is a long run: 1,000 steps of calls and messages, 100
// workers (half of them done) with their changed files.
func benchHistory() *history {
	h := newHistory("refactor the storage layer and keep every test green")
	h.v.Limits = Limits{MaxSteps: 2000, MaxCostUSD: 100, MaxTokens: 50_000_000, MaxWorkers: 200}
	out := strings.Repeat("ok 1.23s github.com/example/pkg\n", 60) // ~2 KB, like a bounded tool output
	for i := 0; i < 100; i++ {
		s := h.worker(fmt.Sprintf("w%03d", i))
		if i%2 == 0 {
			h.end(s, record.StatusCompleted)
		}
		h.v.Changes[s.ID] = changes(fmt.Sprintf("pkg/p%d/a.go", i), fmt.Sprintf("pkg/p%d/a_test.go", i))
	}
	for i := 0; i < 1000; i++ {
		var c Call
		switch i % 4 {
		case 0:
			c = callOut("delegate", map[string]any{"task": fmt.Sprintf("piece %d", i)}, `{"session_id":"w001"}`)
		case 1:
			c = callOut("wait", map[string]any{"timeout_s": 300}, `{"finished":[{"session_id":"w001"}],"running":[]}`)
		case 2:
			c = callOut("exec_command", map[string]any{"cmd": fmt.Sprintf("go test ./pkg/p%d/...", i%100)}, out)
		default:
			c = callOut("check_session", map[string]any{"session_id": fmt.Sprintf("w%03d", i%100)}, fmt.Sprintf("step %d: %s", i, out))
		}
		h.step(fmt.Sprintf("Step %d: the storage layer is moving along; checking the workers next.", i), c)
	}
	return h
}

func benchConfig() *Config {
	cfg := DefaultConfig()
	cfg.Scope.Keywords = []string{"kubernetes", "rewrite everything", "unrelated"}
	cfg.Pattern.Rules = []PatternRule{
		{Regex: mustRegexp(`(?i)git push (-f|--force)`), Action: Abort, In: "outputs"},
		{Regex: mustRegexp(`(?i)\bpassword\s*=`), Action: Pause},
	}
	cfg.LLM.Enabled = true
	cfg.LLM.Every = 1
	return cfg
}

func mustRegexp(s string) Regexp {
	var r Regexp
	if err := r.UnmarshalText([]byte(s)); err != nil {
		panic(err)
	}
	return r
}

// instant answers reviews at once, so the benchmark measures the
// watchers, not a model.
type instant struct{}

func (instant) Complete(context.Context, Prompt) (Completion, error) {
	return Completion{Text: `{"verdict":"ok"}`, Usage: record.Usage{InputTokens: 3000, OutputTokens: 20, TotalTokens: 3020}}, nil
}

// Every run watcher before one step of a run with 1,000 steps of history
// and 100 workers, each watcher meeting the history for the first time
// (the most it ever reads: a resumed run's first step).
func BenchmarkRunWatchersFirstLook(b *testing.B) {
	v := benchHistory().view()
	cfg := benchConfig()
	b.ReportAllocs()
	for b.Loop() {
		e := New(cfg, Options{Model: instant{}, Prices: record.DefaultPrices()})
		rep := e.Check(context.Background(), v)
		if len(rep.Problems) > 0 {
			b.Fatal(rep.Problems)
		}
	}
}

// The same, at each new step of a run that goes on: the watchers read
// what is new since the step before. The oldest step is dropped as one
// is added, so the history stays at 1,000 steps.
func BenchmarkRunWatchersEachStep(b *testing.B) {
	h := benchHistory()
	e := New(benchConfig(), Options{Model: instant{}, Prices: record.DefaultPrices()})
	e.Check(context.Background(), h.view())
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		h.step("still going", callOut("check_session", map[string]any{"session_id": fmt.Sprintf("w%03d", i%100)}, fmt.Sprintf("turn %d", i)))
		h.v.Calls, h.v.Messages = h.v.Calls[1:], h.v.Messages[1:]
		v := h.view()
		if rep := e.Check(context.Background(), v); len(rep.Problems) > 0 {
			b.Fatal(rep.Problems)
		}
	}
}

// The worker watchers on one update of one of 100 running workers.
func BenchmarkWorkerWatchersUpdate(b *testing.B) {
	w := NewWorkers(nil, WorkerOptions{})
	var recs []*rec
	for i := 0; i < 100; i++ {
		r := newRec(fmt.Sprintf("w%03d", i)).startTurn(t0)
		recs = append(recs, r)
		w.handle(context.Background(), r.update(true), t0)
	}
	w.handle(context.Background(), synced(), t0)
	ev := record.Event{Type: record.EventCommand, Command: "go test ./...", Output: "ok"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		w.handle(context.Background(), recs[i%100].update(false, ev), t0)
		w.next()
	}
}

package watchers

import (
	"context"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fixed answers the same every time.
type fixed struct {
	name   string
	action Action
	asked  atomic.Int32
}

func (f *fixed) Name() string { return f.name }
func (f *fixed) Check(context.Context, *RunView) Verdict {
	f.asked.Add(1)
	return Verdict{Action: f.action, Message: f.name + " says " + string(f.action)}
}

// panicky panics when asked.
type panicky struct{ asked atomic.Int32 }

func (p *panicky) Name() string { return "panicky" }
func (p *panicky) Check(context.Context, *RunView) Verdict {
	p.asked.Add(1)
	var m map[string]int
	m["boom"]++
	return Verdict{}
}

// slow answers after its context ends, or when released.
type slow struct {
	release chan struct{}
	asked   atomic.Int32
}

func (s *slow) Name() string { return "slow" }
func (s *slow) Check(ctx context.Context, _ *RunView) Verdict {
	s.asked.Add(1)
	<-s.release // ignores ctx: the worst case
	return Verdict{Action: Abort, Message: "too late"}
}

// emptyEngine has no watchers of its own; the default timeout of those a
// test adds is a minute, room for a loaded machine: a test that wants one
// to time out gives it a timeout of its own.
func emptyEngine() *Engine {
	cfg := DefaultConfig()
	cfg.Timeout.Duration = time.Minute
	for _, c := range []*Common{&cfg.Progress.Common, &cfg.Budget.Common, &cfg.Delegation.Common, &cfg.DelegationReminder.Common, &cfg.Quality.Common} {
		c.Enabled = false
	}
	return New(cfg, Options{})
}

func TestMostSevereWinsTiesByPriority(t *testing.T) {
	e := emptyEngine()
	e.Add(&fixed{name: "low-abort", action: Abort}, 1, 0)
	e.Add(&fixed{name: "nudger", action: Nudge}, 99, 0)
	e.Add(&fixed{name: "high-abort", action: Abort}, 5, 0)
	e.Add(&fixed{name: "pauser", action: Pause}, 50, 0)
	e.Add(&fixed{name: "fine", action: Continue}, 100, 0)
	rep := e.Check(context.Background(), newHistory("x").view())
	var got []string
	for _, v := range rep.Verdicts {
		got = append(got, v.Watcher+":"+string(v.Action))
	}
	want := []string{"high-abort:abort", "low-abort:abort", "pauser:pause", "nudger:nudge"}
	if !reflect.DeepEqual(got, want) || rep.Winner().Watcher != "high-abort" || len(rep.Problems) != 0 {
		t.Errorf("verdicts %v, problems %v", got, rep.Problems)
	}
	if w := emptyEngine().Check(context.Background(), newHistory("x").view()).Winner(); w.Action != Continue {
		t.Errorf("winner of nothing: %+v", w)
	}
}

func TestPanicAndOverrunAreReportedAndSkipped(t *testing.T) {
	e := emptyEngine()
	p, s, f := &panicky{}, &slow{release: make(chan struct{})}, &fixed{name: "nudger", action: Nudge}
	e.Add(p, 10, 0)
	e.Add(s, 10, 50*time.Millisecond)
	e.Add(f, 1, 0)
	h := newHistory("x")
	rep := e.Check(context.Background(), h.view())
	if rep.Winner().Watcher != "nudger" || len(rep.Problems) != 2 ||
		rep.Problems[0].Kind != "panic" || !strings.Contains(rep.Problems[0].Error(), "watcher panicky panicked (assignment to entry in nil map) and is off for the rest of the run; skipped") ||
		rep.Problems[1].Kind != "timeout" || rep.Problems[1].Error() != "watcher slow did not answer within 50ms; skipped" {
		t.Fatalf("report %+v", rep)
	}
	// The slow one is still at it: skipped without waiting; the panicky
	// one is not asked again.
	h.step("", call("wait", nil))
	rep = e.Check(context.Background(), h.view())
	if rep.Winner().Watcher != "nudger" || len(rep.Problems) != 1 || rep.Problems[0].Text != "is still busy with its check before step 1" {
		t.Fatalf("report %+v", rep)
	}
	close(s.release)
	e.Close()
	rep = e.Check(context.Background(), h.view())
	if p.asked.Load() != 1 || s.asked.Load() != 2 || f.asked.Load() != 3 {
		t.Errorf("asked: panicky %d, slow %d, nudger %d", p.asked.Load(), s.asked.Load(), f.asked.Load())
	}
	e.Close()
}

func TestWatchersRunConcurrently(t *testing.T) {
	e := emptyEngine()
	// Four watchers that each need the others to have started: run one
	// after another, they would all time out.
	const n = 4
	started := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		e.Add(&barrier{started: started, n: n}, i, time.Minute)
	}
	rep := e.Check(context.Background(), newHistory("x").view())
	if len(rep.Problems) != 0 || len(rep.Verdicts) != n {
		t.Errorf("report %+v", rep)
	}
}

type barrier struct {
	started chan struct{}
	n       int
}

func (b *barrier) Name() string { return "barrier" }
func (b *barrier) Check(ctx context.Context, _ *RunView) Verdict {
	b.started <- struct{}{}
	for len(b.started) < b.n {
		select {
		case <-ctx.Done():
			return Verdict{}
		case <-time.After(time.Millisecond):
		}
	}
	return Verdict{Action: Nudge, Message: "all started"}
}

func TestNewTakesTheEnabledWatchers(t *testing.T) {
	cfg := DefaultConfig()
	if got := strings.Join(New(cfg, Options{}).Names(), ","); got != "progress,budget,delegation,delegation_reminder,quality" {
		t.Errorf("defaults: %s", got)
	}
	cfg.Scope.Keywords = []string{"k8s"}
	cfg.Pattern.Rules = []PatternRule{{Regex: Regexp{}, Action: Nudge}}
	cfg.LLM.Enabled = true
	cfg.Budget.Enabled = false
	got := strings.Join(New(cfg, Options{Model: &reviewer{}}).Names(), ",")
	if got != "progress,scope,pattern,delegation,delegation_reminder,quality,llm" {
		t.Errorf("configured: %s", got)
	}
	// No model, no llm.
	if got := strings.Join(New(cfg, Options{}).Names(), ","); strings.Contains(got, "llm") {
		t.Errorf("without a model: %s", got)
	}
}

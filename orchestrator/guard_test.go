package orchestrator

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
	"github.com/zwarm/zwarm/watchers"
)

// scriptedGuard answers by step and keeps what it was shown.
type scriptedGuard struct {
	mu     sync.Mutex
	byStep map[int][]Verdict
	views  []*watchers.RunView
}

func (g *scriptedGuard) Check(_ context.Context, v *watchers.RunView) []Verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.views = append(g.views, v)
	return g.byStep[v.Step]
}

func TestGuardNudgesAndSees(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "GUARD nudge")
	g := &scriptedGuard{byStep: map[int][]Verdict{
		2: {{Watcher: "progress", Action: runs.ActionNudge, Message: "you repeat yourself"}, {Watcher: "quiet", Action: runs.ActionContinue}},
	}}
	h.script(fakemodel.Reply{Reasoning: "look", Text: "listing", Calls: []fakemodel.Call{call("list_sessions", map[string]any{})}},
		calls(call("finish", map[string]any{"summary": "done"})))
	opt := h.options(h.settings(nil), 0)
	opt.Guard = g
	r, err := Start(context.Background(), opt, h.key)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Execute(context.Background())
	if err != nil || rec.Status != runs.StatusCompleted {
		t.Fatalf("%+v %v", rec, err)
	}
	reqs := h.requests()
	in := fakemodel.Input(reqs[1].Body)
	if nudge := in[len(in)-2]; nudge.Role != "developer" || nudge.Text != "[watcher:progress] you repeat yourself" {
		t.Errorf("item before the observation: %+v", nudge)
	}
	for _, it := range fakemodel.Input(reqs[0].Body) {
		if strings.HasPrefix(it.Text, "[watcher:") {
			t.Error("nudge in the first call")
		}
	}
	ge := h.eventsOf(runs.EventGuard)
	if len(ge) != 1 || ge[0].Watcher != "progress" || ge[0].Action != runs.ActionNudge {
		t.Errorf("guard events %+v", ge)
	}
	v := g.views[1]
	if v.Step != 2 || len(v.Calls) != 1 || v.Calls[0].Name != "list_sessions" || v.Usage.TotalTokens != 110 ||
		len(v.Messages) != 2 || v.Messages[0].Kind != "reasoning" || v.Limits.MaxSteps != 20 || v.RunID != rec.ID {
		t.Errorf("view %+v", v)
	}
}

func TestGuardPauseAndAbort(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		action runs.Action
		status runs.Status
		reason string
	}{
		{runs.ActionPause, runs.StatusInterrupted, "paused by watcher budget: 80% used; --resume continues it"},
		{runs.ActionAbort, runs.StatusFailed, "aborted by watcher budget: 80% used"},
	} {
		h := newHarness(t, "GUARD "+string(c.action))
		h.srv.Fallback(calls(call("list_sessions", map[string]any{})))
		opt := h.options(h.settings(nil), 0)
		opt.Guard = &scriptedGuard{byStep: map[int][]Verdict{3: {{Watcher: "budget", Action: c.action, Message: "80% used"}}}}
		r, err := Start(context.Background(), opt, h.key)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Execute(context.Background())
		if err != nil || rec.Status != c.status || rec.StopReason != c.reason || rec.Steps != 2 {
			t.Errorf("%s: %+v %v", c.action, rec, err)
		}
	}
}

package orchestrator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// A run whose conversation outgrows a small context window compacts, and
// every request stays valid, before and after a resume.
func TestCompactionDuringARun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "COMPACT: big outputs")
	step := 0
	h.srv.Fallback(fakemodel.Reply{Dynamic: func(body []byte) fakemodel.Reply {
		step++
		// The server counts tokens as bytes/4, as the estimate does.
		rep := fakemodel.Reply{Reasoning: "more", Encrypted: strings.Repeat("E", 200), InputTokens: int64(len(body) / 4),
			Calls: []fakemodel.Call{call("exec_command", map[string]any{"cmd": "head -c 8000 /dev/zero | tr '\\0' x; echo", "yield_time_ms": 60000, "login": false})}}
		if step%3 == 0 {
			rep.Calls = append(rep.Calls, call("list_sessions", map[string]any{}))
		}
		return rep
	}})
	set := h.settings(func(s *Settings) {
		s.Limits.MaxSteps = 12
		s.ContextWindow, s.CompactAt, s.CompactTo = 12000, 0.8, 0.5
	})
	rec := h.execute(set, 0)
	if rec.Status != runs.StatusLimited || rec.Compactions == 0 {
		t.Fatalf("record %+v", rec)
	}
	check := func(from int) {
		t.Helper()
		for i, req := range h.requests()[from:] {
			var input []json.RawMessage
			for _, it := range fakemodel.Input(req.Body) {
				input = append(input, it.Raw)
			}
			if err := checkPairs(input); err != nil {
				t.Fatalf("request %d: %v", from+i+1, err)
			}
			if len(req.Body) > 12000*4 {
				t.Errorf("request %d is %d bytes, over the window", from+i+1, len(req.Body))
			}
		}
	}
	check(0)
	evs := h.eventsOf(runs.EventCompaction)
	if len(evs) == 0 || evs[0].Compaction.DroppedCalls == 0 || evs[0].Compaction.AfterTokens >= evs[0].Compaction.BeforeTokens {
		t.Fatalf("%d compaction events, the first %+v", len(evs), evs[0].Compaction)
	}
	_, items, _ := h.onDisk(rec.ID)
	if err := checkPairs(items); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(inspect(items[2]).text(), markerPrefix) {
		t.Errorf("no marker in the stored conversation: %s", items[2])
	}
	n := len(h.requests())
	r, err := Resume(context.Background(), h.options(h.settings(func(s *Settings) {
		s.Limits.MaxSteps = 16
		s.ContextWindow, s.CompactAt, s.CompactTo = 12000, 0.8, 0.5
	}), 0), rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec2, err := r.Execute(context.Background())
	if err != nil || rec2.Steps != 16 {
		t.Fatalf("%+v %v", rec2, err)
	}
	check(n)
}

// A model that pastes a task of megabytes into a call: the run goes on,
// every request after it under the window (the call's arguments are cut
// when it compacts), and events.jsonl keeps a bounded copy of them.
func TestARunGoesOnAfterACallOfMegabytes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "HUGE: a huge call")
	step := 0
	h.srv.Fallback(fakemodel.Reply{Dynamic: func(body []byte) fakemodel.Reply {
		step++
		rep := fakemodel.Reply{InputTokens: int64(len(body) / 4)}
		if step == 1 {
			rep.Calls = []fakemodel.Call{call("list_sessions", map[string]any{"note": strings.Repeat("n", 2<<20)})}
		} else {
			rep.Calls = []fakemodel.Call{call("list_sessions", map[string]any{})}
		}
		return rep
	}})
	rec := h.execute(h.settings(func(s *Settings) {
		s.Limits.MaxSteps = 4
		s.ContextWindow, s.CompactAt, s.CompactTo = 12000, 0.8, 0.5
	}), 0)
	if rec.Status != runs.StatusLimited || rec.Steps != 4 || rec.Compactions == 0 {
		t.Fatalf("record %+v", rec)
	}
	for i, req := range h.requests()[2:] {
		if len(req.Body) > 12000*4 {
			t.Errorf("request %d is %d bytes, over the window", i+3, len(req.Body))
		}
	}
	for _, ev := range h.eventsOf(runs.EventToolCall) {
		if len(ev.Args) > 9<<10 || !json.Valid(ev.Args) {
			t.Errorf("step %d's call is kept as %d bytes (valid JSON: %t)", ev.Step, len(ev.Args), json.Valid(ev.Args))
		}
	}
}

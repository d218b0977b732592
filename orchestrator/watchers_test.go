package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
	"github.com/zwarm/zwarm/watchers"
)

// watched starts a run of the harness's task with the watchers of cfg,
// runs it to its end and returns its record.
func (h *harness) watched(set Settings, cfg *watchers.Config, before func(*Run)) *runs.Record {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := Start(ctx, h.options(set, 0), h.key)
	if err != nil {
		h.t.Fatal(err)
	}
	stop := r.Watch(ctx, cfg)
	if before != nil {
		before(r)
	}
	rec, err := r.Execute(ctx)
	stop()
	if err != nil {
		h.t.Fatal(err)
	}
	return rec
}

// nudges are the watcher messages of a request, in order.
func nudges(body []byte) []string {
	var out []string
	for _, it := range fakemodel.Input(body) {
		if strings.HasPrefix(it.Text, "[watcher:") {
			out = append(out, it.Text)
		}
	}
	return out
}

func guardEvents(h *harness) []string {
	var out []string
	for _, ev := range h.eventsOf(runs.EventGuard) {
		out = append(out, fmt.Sprintf("%d %s %s", ev.Step, ev.Watcher, ev.Action))
	}
	return out
}

// A model that calls the same tool again and again is nudged, then,
// as it goes on, the run is aborted.
func TestWatchersNudgeThenAbortALoopingModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "WATCH loop")
	h.srv.Fallback(calls(call("list_sessions", map[string]any{"status": "running"})))
	cfg := watchers.DefaultConfig()
	cfg.Progress.Repeats, cfg.Progress.AbortRepeats = 3, 5
	rec := h.watched(h.settings(nil), cfg, nil)
	if rec.Status != runs.StatusFailed || rec.Steps != 5 ||
		!strings.HasPrefix(rec.StopReason, "aborted by watcher progress: the model called list_sessions with the same arguments 5 times in a row") {
		t.Fatalf("record %+v", rec)
	}
	reqs := h.requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model calls", len(reqs))
	}
	for i, want := range []int{0, 0, 0, 1, 2} {
		if got := nudges(reqs[i].Body); len(got) != want {
			t.Errorf("call %d: nudges %q", i+1, got)
		}
	}
	if n := nudges(reqs[3].Body); len(n) == 0 || !strings.HasPrefix(n[0], "[watcher:progress] You called list_sessions with the same arguments 3 times in a row") {
		t.Errorf("nudge %q", n)
	}
	if got := strings.Join(guardEvents(h), ", "); got != "4 progress nudge, 5 progress nudge, 6 progress abort" {
		t.Errorf("guard events: %s", got)
	}
	_, _, evs := h.onDisk(rec.ID)
	found := 0
	for _, ev := range evs {
		if ev.Type == runs.EventGuard && ev.Watcher == "progress" && ev.Text != "" {
			found++
		}
	}
	if found != 3 {
		t.Errorf("events.jsonl has %d progress verdicts", found)
	}
}

// A worker that prints nothing is reported to the model, naming it; the
// model ends it and delegates the task again, and the run completes.
func TestWatchersReportAStalledWorker(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "WATCH stall")
	gatePath, _ := gate(t)
	h.w.Script(map[string][]fakeagent.Step{
		"index the docs":       {fakeagent.WaitFile(gatePath)},
		"index the docs again": fakeagent.Completes("indexed", 500),
	})
	var stalled string
	h.script(calls(call("delegate", map[string]any{"task": "index the docs"})))
	h.srv.Fallback(fakemodel.Reply{Dynamic: func(body []byte) fakemodel.Reply {
		var first struct {
			SessionID string `json:"session_id"`
		}
		if outs := fakemodel.Outputs(body, "delegate"); len(outs) > 0 {
			json.Unmarshal([]byte(outs[0]), &first)
		}
		var told bool
		for _, n := range nudges(body) {
			if first.SessionID != "" && strings.HasPrefix(n, "[watcher:stall] Worker "+first.SessionID+" ") {
				told, stalled = true, n
			}
		}
		switch {
		case !told:
			return calls(call("sleep", map[string]any{"seconds": 0.5}))
		case len(fakemodel.Outputs(body, "end_session")) == 0:
			return calls(call("end_session", map[string]any{"session_id": first.SessionID, "reason": "stalled"}),
				call("delegate", map[string]any{"task": "index the docs again"}))
		case len(fakemodel.Outputs(body, "wait")) == 0:
			return calls(call("wait", map[string]any{"mode": "all", "timeout_s": 60}))
		}
		return calls(call("finish", map[string]any{"summary": "indexed by the second worker"}))
	}})
	cfg := watchers.DefaultConfig()
	cfg.Stall.FirstEvent.Duration = time.Second
	// The model sleeps a step at a time until the stall is told: steps
	// enough for a loaded machine, where the worker may be slow to start.
	rec := h.watched(h.settings(func(s *Settings) { s.Limits.MaxSteps = 200 }), cfg, nil)
	if rec.Status != runs.StatusCompleted || len(rec.Workers) != 2 {
		t.Fatalf("the run should have completed with two workers; it ended %q (%s) with %d workers, guard events %v",
			rec.Status, rec.StopReason, len(rec.Workers), guardEvents(h))
	}
	first, second := workerOf(t, h.w, rec.Workers[0]), workerOf(t, h.w, rec.Workers[1])
	if first.Status() != record.StatusKilled || second.Status() != record.StatusCompleted || second.Task != "index the docs again" {
		t.Errorf("the first worker should be killed and the second (\"index the docs again\") completed; they are: %s %s, %s %s",
			first.Task, first.Status(), second.Task, second.Status())
	}
	mustContain(t, "the nudge", stalled, "no first event", "after its turn started", "end it (end_session) and delegate its task again")
	// Only the stalls of the first worker count: on a loaded machine the
	// second may also be slow to print its first event, and the first may
	// be told twice (before its supervisor started the turn, and after).
	stalls, failures := 0, 0
	for _, ev := range h.eventsOf(runs.EventGuard) {
		switch {
		case ev.Watcher == "stall" && strings.Contains(ev.Text, first.ID):
			stalls++
		case ev.Watcher == "failure":
			failures++ // the model ended it itself: not news
		}
	}
	if stalls == 0 || failures != 0 {
		t.Errorf("want at least one stall event naming the first worker %s and no failure event; got %d stalls of it and %d failures among the guard events %v",
			first.ID, stalls, failures, guardEvents(h))
	}
}

// cost_guard stops a worker past its cap itself; the model is told.
func TestWatchersCostGuardStopsARunWorker(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "WATCH cost")
	gatePath, _ := gate(t)
	h.w.Script(map[string][]fakeagent.Step{"burn tokens": {
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		fakeagent.Out(`{"type":"turn.started"}`),
		fakeagent.Out(`{"type":"turn.completed","usage":{"input_tokens":50000,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}`),
		fakeagent.WaitFile(gatePath),
	}})
	h.script(calls(call("delegate", map[string]any{"task": "burn tokens"})))
	h.srv.Fallback(fakemodel.Reply{Dynamic: func(body []byte) fakemodel.Reply {
		for _, n := range nudges(body) {
			if strings.HasPrefix(n, "[watcher:cost_guard]") {
				return calls(call("finish", map[string]any{"summary": "the worker was stopped"}))
			}
		}
		return calls(call("sleep", map[string]any{"seconds": 0.3}))
	}})
	cfg := watchers.DefaultConfig()
	cfg.CostGuard.MaxTokens = 10_000
	// The model sleeps a step at a time until the worker is stopped:
	// steps enough for a loaded machine, where the worker may be slow to
	// start.
	rec := h.watched(h.settings(func(s *Settings) { s.Limits.MaxSteps = 300 }), cfg, nil)
	if rec.Status != runs.StatusCompleted || len(rec.Workers) != 1 {
		t.Fatalf("the run should have completed with one worker; it ended %q (%s) with %d workers, guard events %v",
			rec.Status, rec.StopReason, len(rec.Workers), guardEvents(h))
	}
	w := workerOf(t, h.w, rec.Workers[0])
	if w.Status() != record.StatusKilled || !strings.Contains(w.Error, "stopped by watcher cost_guard: it used 50k tokens, its cap is 10k") {
		t.Errorf("worker %s: %s", w.Status(), w.Error)
	}
	ge := h.eventsOf(runs.EventGuard)
	if len(ge) != 1 || ge[0].Watcher != "cost_guard" || !strings.Contains(ge[0].Text, w.ID) || !strings.Contains(ge[0].Text, "It has been stopped") {
		t.Errorf("guard events %+v", ge)
	}
}

// The llm watcher reviews through the run's client; its concern reaches
// the model, and what it cost is in the run's accounts and totals.
func TestWatchersLLMReviewIsCountedInTheRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "WATCH llm")
	reviews := 0
	h.srv.Fallback(fakemodel.Reply{Dynamic: func(body []byte) fakemodel.Reply {
		in := fakemodel.Input(body)
		if len(in) > 0 && strings.Contains(in[0].Text, "You review the trajectory of an orchestrator") {
			reviews++
			if !strings.Contains(in[1].Text, "Task: WATCH llm") || !strings.Contains(in[1].Text, "call exec_command") {
				return fakemodel.Reply{Text: "no trajectory in the review"}
			}
			return fakemodel.Reply{Text: `{"verdict":"concern","reason":"Delegate the work."}`, InputTokens: 2000, OutputTokens: 50}
		}
		for _, n := range nudges(body) {
			if n == "[watcher:llm] A reviewer of this run has a concern: Delegate the work." {
				return calls(call("finish", map[string]any{"summary": "heard"}))
			}
		}
		return calls(call("exec_command", map[string]any{"cmd": fmt.Sprintf("echo %d", len(in)), "yield_time_ms": 60000, "login": false}))
	}})
	cfg := watchers.DefaultConfig()
	cfg.LLM.Enabled, cfg.LLM.Every = true, 2
	rec := h.watched(h.settings(nil), cfg, nil)
	if rec.Status != runs.StatusCompleted || rec.Steps != 3 || reviews != 1 {
		t.Fatalf("record %+v, %d reviews", rec, reviews)
	}
	disk, _, _ := h.onDisk(rec.ID)
	a, ok := disk.Accounts["watcher:llm"]
	want := (2000*1.25 + 50*10.0) / 1e6 // gpt-5.1
	if !ok || a.Usage.InputTokens != 2000 || a.CostUSD == nil || fmt.Sprintf("%.6f", *a.CostUSD) != fmt.Sprintf("%.6f", want) {
		t.Fatalf("account %+v", disk.Accounts)
	}
	total, _ := disk.TotalCost()
	if disk.WorkerUsage.InputTokens != 2000 || fmt.Sprintf("%.6f", total) != fmt.Sprintf("%.6f", want+*disk.CostUSD) {
		t.Errorf("totals: workers %+v, cost %v", disk.WorkerUsage, total)
	}
}

// Two watchers abort: the one with the higher priority is the reason;
// both are written. A watcher that panics is written as a notice and the
// run goes on.
func TestWatchersTieByPriorityAndReportProblems(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "WATCH ties")
	h.srv.Fallback(calls(call("list_sessions", map[string]any{})))
	cfg := watchers.DefaultConfig()
	rec := h.watched(h.settings(nil), cfg, func(r *Run) {
		e := r.opt.Guard.(*watcherGuard).engine
		e.Add(&onStep{name: "boom", step: 1, action: "panic"}, 0, 0)
		e.Add(&onStep{name: "minor", step: 3, action: watchers.Abort}, 1, 0)
		e.Add(&onStep{name: "major", step: 3, action: watchers.Abort}, 100, 0)
		e.Add(&onStep{name: "pauser", step: 3, action: watchers.Pause}, 1000, 0)
	})
	if rec.Status != runs.StatusFailed || rec.StopReason != "aborted by watcher major: major at step 3" || rec.Steps != 2 {
		t.Fatalf("record %+v", rec)
	}
	if got := strings.Join(guardEvents(h), ", "); got != "3 pauser pause, 3 minor abort, 3 major abort" {
		t.Errorf("guard events: %s", got)
	}
	var notes []string
	for _, ev := range h.eventsOf(runs.EventNotice) {
		if ev.Watcher != "" {
			notes = append(notes, ev.Watcher+": "+ev.Text)
		}
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "boom: watcher boom panicked (step 1) and is off for the rest of the run; skipped") {
		t.Errorf("notices %q", notes)
	}
}

// onStep answers action at one step (panics if action is "panic").
type onStep struct {
	name   string
	step   int
	action watchers.Action
}

func (o *onStep) Name() string { return o.name }
func (o *onStep) Check(_ context.Context, v *watchers.RunView) watchers.Verdict {
	if v.Step != o.step {
		return watchers.Verdict{}
	}
	if o.action == "panic" {
		panic(fmt.Sprintf("step %d", v.Step))
	}
	return watchers.Verdict{Action: o.action, Message: fmt.Sprintf("%s at step %d", o.name, v.Step)}
}

// The guard reads the view the run gives it: calls, messages, limits.
func TestTheGuardsViewOfTheRun(t *testing.T) {
	cost := 0.5
	r := &Run{rec: &runs.Record{ID: "r", Task: "t", Model: "m", Steps: 2, CostUSD: &cost},
		set:      Settings{Limits: runs.Limits{MaxSteps: 9, MaxWorkers: 2, MaxCostUSD: 1, MaxTokens: 5, Timeout: config.Duration{Duration: time.Hour}}},
		calls:    []watchers.Call{{Step: 1, ID: "c1", Name: "wait", Args: json.RawMessage(`{}`), Output: "o", IsError: true}},
		messages: []watchers.Message{{Step: 2, Kind: "reasoning", Text: "hm"}}, started: time.Now()}
	rv := r.view()
	if rv.RunID != "r" || rv.Step != 3 || rv.Limits != (watchers.Limits{MaxSteps: 9, MaxCostUSD: 1, MaxTokens: 5, MaxWorkers: 2}) || *rv.CostUSD != 0.5 ||
		rv.Calls[0].ID != "c1" || !rv.Calls[0].IsError || rv.Messages[0].Kind != "reasoning" {
		t.Errorf("%+v", rv)
	}
	// A snapshot: what the run does next does not reach a view kept.
	r.calls[0].Name = "changed"
	if rv.Calls[0].Name != "wait" {
		t.Error("the view shares the run's calls")
	}
}

// A pause ends the run as resumable with the watcher's reason; resumed,
// the run goes on: what paused it is not judged again.
func TestWatchersPauseThenResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "WATCH pause")
	h.script(calls(call("exec_command", map[string]any{"cmd": "echo password=hunter2", "yield_time_ms": 60000, "login": false})),
		calls(call("finish", map[string]any{"summary": "done after the pause"})))
	cfg := watchers.DefaultConfig()
	var rule watchers.PatternRule
	if err := rule.Regex.UnmarshalText([]byte(`password=\S+`)); err != nil {
		t.Fatal(err)
	}
	rule.Action, rule.Message, rule.In = watchers.Pause, "a secret showed up in a tool's output", "outputs"
	cfg.Pattern.Rules = []watchers.PatternRule{rule}
	rec := h.watched(h.settings(nil), cfg, nil)
	if rec.Status != runs.StatusInterrupted || rec.Steps != 1 ||
		rec.StopReason != "paused by watcher pattern: a secret showed up in a tool's output; --resume continues it" {
		t.Fatalf("record %+v", rec)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := Resume(ctx, h.options(h.settings(nil), 0), rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	stop := r.Watch(ctx, cfg)
	rec, err = r.Execute(ctx)
	stop()
	if err != nil || rec.Status != runs.StatusCompleted || rec.Summary != "done after the pause" || rec.Steps != 2 {
		t.Fatalf("resumed: %+v %v", rec, err)
	}
	if got := strings.Join(guardEvents(h), ", "); got != "2 pattern pause" {
		t.Errorf("guard events: %s", got)
	}
}

// An overlap alert reaches the model with its priority and what to do:
// steer a running worker away from the file, or, for one that settled
// with its change not landed, land one and bring it into the other.
func TestOverlapAlertsBecomeNudgesWithAdvice(t *testing.T) {
	cfg := watchers.DefaultConfig()
	g := &watcherGuard{cfg: cfg}
	running := new(sessionstest.WithStatus(record.Session{ID: "9c1d4e2f-0000-4000-8000-000000000000", Owner: &proc.Ref{PID: 1}}, record.StatusRunning))
	done := new(sessionstest.WithStatus(record.Session{ID: "3f2a9c1d-0000-4000-8000-000000000000"}, record.StatusCompleted))
	reason := "3f2a9c1d and 9c1d4e2f both change api/server.go: the second to land may conflict"
	g.alerts = []watchers.Alert{
		{Watcher: "overlap", SessionID: running.ID, Task: "add limits", Reason: reason},
		{Watcher: "overlap", SessionID: done.ID, Task: "add metrics", Reason: reason},
	}
	out := g.workerVerdicts(&watchers.RunView{Workers: []*record.Session{running, done}})
	if len(out) != 2 || out[0].Priority != cfg.Overlap.Priority || out[0].Priority == 0 ||
		!strings.Contains(out[0].Message, reason) || !strings.Contains(out[0].Message, "leave that file alone (converse)") ||
		!strings.Contains(out[1].Message, reason) || !strings.Contains(out[1].Message, "then bring that into the other (update_session)") {
		t.Fatalf("verdicts %+v", out)
	}
}

// A nudge is delivered once: a run paused right after its watchers
// nudged it, then resumed with the same limits, is not told the same again
// by watchers that do not remember having said it. A later, different
// nudge still comes.
func TestNudgesAreNotRepeatedOnResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "WATCH nudge once")
	echo := func(s string) fakemodel.Reply {
		return calls(call("exec_command", map[string]any{"cmd": "echo " + s, "yield_time_ms": 60000, "login": false}))
	}
	h.script(echo("one"), echo("two"), echo("password=hunter2"), echo("three"), echo("four"),
		calls(call("finish", map[string]any{"summary": "done"})))
	cfg := watchers.DefaultConfig()
	cfg.Budget.WarnAt = 0.3
	var rule watchers.PatternRule
	if err := rule.Regex.UnmarshalText([]byte(`password=\S+`)); err != nil {
		t.Fatal(err)
	}
	rule.Action, rule.Message, rule.In = watchers.Pause, "a secret showed up in a tool's output", "outputs"
	cfg.Pattern.Rules = []watchers.PatternRule{rule}
	set := h.settings(func(s *Settings) { s.Limits.MaxSteps = 8 })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var runID string
	for _, resume := range []bool{false, true} {
		opt := h.options(set, 0)
		opt.Guard = &stubborn{said: map[string]bool{}}
		var r *Run
		var err error
		if resume {
			r, err = Resume(ctx, opt, runID)
		} else {
			r, err = Start(ctx, opt, h.key)
		}
		if err != nil {
			t.Fatal(err)
		}
		stop := r.Watch(ctx, cfg)
		rec, err := r.Execute(ctx)
		stop()
		if want := map[bool]runs.Status{false: runs.StatusInterrupted, true: runs.StatusCompleted}[resume]; err != nil || rec.Status != want {
			t.Fatalf("resumed %v: %+v %v", resume, rec, err)
		}
		runID = rec.ID
	}
	var got []string
	for _, ev := range h.eventsOf(runs.EventGuard) {
		if ev.Action == runs.ActionNudge {
			got = append(got, fmt.Sprintf("%d %s: %.30s", ev.Step, ev.Watcher, ev.Text))
		}
	}
	want := []string{"3 stubborn: keep going", "4 budget: Budget: 3 of 8 steps used, 5 l", "6 stubborn: almost there"}
	if !slices.Equal(got, want) {
		t.Fatalf("nudges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_, items, _ := h.onDisk(runID)
	n := 0
	for _, raw := range items {
		if strings.HasPrefix(inspect(raw).text(), "[watcher:") {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("%d nudges in the conversation, want %d", n, len(want))
	}
}

// stubborn nudges "keep going" from the third step and "almost there" from
// the sixth, each once in a process: a guard with no memory of what it
// said before the run stopped.
type stubborn struct{ said map[string]bool }

func (g *stubborn) Check(_ context.Context, v *watchers.RunView) []Verdict {
	msg := ""
	switch {
	case v.Step >= 6:
		msg = "almost there"
	case v.Step >= 3:
		msg = "keep going"
	}
	if msg == "" || g.said[msg] {
		return nil
	}
	g.said[msg] = true
	return []Verdict{{Watcher: "stubborn", Action: runs.ActionNudge, Message: msg}}
}

package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

func TestMaxSteps(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "LIMIT steps: loop forever")
	h.srv.Fallback(calls(call("list_sessions", map[string]any{})))
	rec := h.execute(h.settings(func(s *Settings) { s.Limits.MaxSteps = 3 }), 0)
	if rec.Status != runs.StatusLimited || rec.Steps != 3 || !strings.Contains(rec.StopReason, "used its 3 steps (max_steps)") {
		t.Fatalf("record %+v", rec)
	}
	if n := len(h.requests()); n != 3 {
		t.Errorf("%d model calls", n)
	}
	if lim := h.eventsOf(runs.EventLimit); len(lim) != 1 || lim[0].Limit != "max_steps" {
		t.Errorf("limit events %+v", lim)
	}
}

func TestMaxCostCountsTheModelAndItsWorkers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "LIMIT cost: spend")
	// The worker reports 1M input tokens: $0.25 at gpt-5.1-codex-mini
	// prices; each model call 100k input tokens: $0.125.
	h.w.Script(map[string][]fakeagent.Step{"spend": fakeagent.Completes("spent", 1_000_000)})
	h.script(calls(call("delegate", map[string]any{"task": "spend"})), calls(call("wait", map[string]any{})))
	h.srv.Fallback(fakemodel.Reply{Calls: []fakemodel.Call{call("list_sessions", map[string]any{})}, InputTokens: 100_000})
	rec := h.execute(h.settings(func(s *Settings) { s.Limits.MaxCostUSD = 0.3 }), 0)
	// Step 1 and 2 cost $0.0003 each; after the wait the workers' $0.25
	// counts; step 3 adds $0.125: over $0.30 before step 4.
	if rec.Status != runs.StatusLimited || rec.Steps != 3 || !strings.Contains(rec.StopReason, "the limit is $0.30 (max_cost)") {
		t.Fatalf("record %+v", rec)
	}
	if rec.WorkerCostUSD == nil || *rec.WorkerCostUSD < 0.25 {
		t.Errorf("worker cost %v", rec.WorkerCostUSD)
	}
}

func TestMaxTokens(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "LIMIT tokens: use them")
	h.w.Script(map[string][]fakeagent.Step{"use tokens": fakeagent.Completes("used", 1000)})
	h.script(calls(call("delegate", map[string]any{"task": "use tokens"})), calls(call("wait", map[string]any{})))
	h.srv.Fallback(calls(call("list_sessions", map[string]any{})))
	rec := h.execute(h.settings(func(s *Settings) { s.Limits.MaxTokens = 1200 }), 0)
	// 2 × 110 for the model + 1010 for the worker = 1230.
	if rec.Status != runs.StatusLimited || rec.Steps != 2 || rec.TotalTokens() != 1230 || !strings.Contains(rec.StopReason, "(max_tokens)") {
		t.Fatalf("record %+v, %d tokens", rec, rec.TotalTokens())
	}
}

func TestMaxWorkersRefusesAndTheRunGoesOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "LIMIT workers: two at once")
	g, open := gate(t)
	h.w.Script(map[string][]fakeagent.Step{"first": append([]fakeagent.Step{fakeagent.WaitFile(g)}, fakeagent.Completes("first done", 10)...)})
	h.script(calls(call("delegate", map[string]any{"task": "first"})), calls(call("delegate", map[string]any{"task": "second"})),
		calls(call("finish", map[string]any{"summary": "one worker only"})))
	rec := h.execute(h.settings(func(s *Settings) { s.Limits.MaxWorkers = 1 }), 0)
	open()
	if rec.Status != runs.StatusCompleted || len(rec.Workers) != 1 {
		t.Fatalf("record %+v", rec)
	}
	res := h.eventsOf(runs.EventToolResult)
	if len(res) != 3 || !res[1].IsError || !strings.Contains(res[1].Output, "the limit is 1 (max_workers)") {
		t.Errorf("results %+v", res)
	}
}

func TestWallClockLimitStopsAModelCall(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "LIMIT time: think forever")
	stall := make(chan struct{})
	defer close(stall)
	h.script(fakemodel.Reply{Text: "late", Stall: stall})
	began := time.Now()
	rec := h.execute(h.settings(func(s *Settings) { s.Limits.Timeout = config.Duration{Duration: time.Second} }), 0)
	if rec.Status != runs.StatusLimited || !strings.Contains(rec.StopReason, "wall-clock limit of 1s") || rec.Steps != 0 {
		t.Fatalf("record %+v", rec)
	}
	if d := time.Since(began); d > 20*time.Second {
		t.Errorf("the limit took %v to stop the run", d)
	}
	if lim := h.eventsOf(runs.EventLimit); len(lim) != 1 || lim[0].Limit != "timeout" {
		t.Errorf("limit events %+v", lim)
	}
}

func TestKillWorkersOnExitAndShellCleanup(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "CLEANUP: leave nothing")
	g, _ := gate(t)
	h.w.Script(map[string][]fakeagent.Step{"never ends": {fakeagent.WaitFile(g)}})
	// The command writes its pid once it runs; the model's second step
	// waits for it, so the run ends with the command surely started.
	pidFile := filepath.Join(t.TempDir(), "pid")
	h.script(calls(call("delegate", map[string]any{"task": "never ends"}),
		call("exec_command", map[string]any{"cmd": "echo $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "; exec sleep 1000",
			"yield_time_ms": 500, "login": false})))
	h.srv.Fallback(fakemodel.Reply{Dynamic: func([]byte) fakemodel.Reply {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(pidFile); err == nil {
				break
			}
		}
		return calls(call("list_sessions", map[string]any{}))
	}})
	rec := h.execute(h.settings(func(s *Settings) { s.Limits.MaxSteps = 2; s.KillWorkersOnExit = true }), 0)
	if rec.Status != runs.StatusLimited || len(rec.Workers) != 1 {
		t.Fatalf("the run should have used its 2 steps with one worker; it ended %q (%s) with %d workers", rec.Status, rec.StopReason, len(rec.Workers))
	}
	if s := workerOf(t, h.w, rec.Workers[0]); s.Status() != record.StatusKilled || rec.Accounts[s.ID].Status != record.StatusKilled {
		t.Errorf("the worker should have been killed on exit, and its account say so; the worker is %s, its account %+v", s.Status(), rec.Accounts[s.ID])
	}
	var out string
	for _, ev := range h.eventsOf(runs.EventToolResult) {
		if ev.Tool == "exec_command" {
			out = ev.Output
		}
	}
	if !strings.Contains(out, "Process running with session ID") {
		t.Fatalf("exec_command should have left its command running; it answered %q", out)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the command did not write its pid within a minute: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 0 || syscall.Kill(pid, 0) == nil {
		t.Errorf("the command's process %d (pid file %q) outlived the run", pid, b)
	}
}

func TestAPIFailsThreeTimesThenSucceeds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "API flaky")
	fail := fakemodel.Reply{Status: 503, Header: map[string]string{"Retry-After-Ms": "1"}}
	h.script(fail, fail, fail, calls(call("finish", map[string]any{"summary": "made it"})))
	rec := h.execute(h.settings(nil), 3)
	if rec.Status != runs.StatusCompleted || rec.Steps != 1 {
		t.Fatalf("record %+v", rec)
	}
	if r := h.eventsOf(runs.EventRetry); len(r) != 3 || r[0].Status != 503 || r[2].Attempt != 3 {
		t.Errorf("retry events %+v", r)
	}
}

func TestAPIAlwaysFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "API down")
	h.srv.Fallback(fakemodel.Reply{Status: 500, Body: `{"error":{"message":"The server had an error processing your request.","type":"server_error"}}`,
		Header: map[string]string{"Retry-After-Ms": "1"}})
	rec := h.execute(h.settings(nil), 2)
	if rec.Status != runs.StatusFailed || rec.Steps != 0 ||
		!strings.Contains(rec.StopReason, "the model API failed: model API error 500 (server_error): The server had an error processing your request.") {
		t.Fatalf("record %+v", rec)
	}
	if n := len(h.requests()); n != 3 {
		t.Errorf("%d requests for 2 retries", n)
	}
	// The failure is saved: the run can be resumed once the API is back.
	if _, items, _ := h.onDisk(rec.ID); len(items) != 2 {
		t.Errorf("%d items", len(items))
	}
}

func TestBrokenStreamIsCalledAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "API cut")
	h.script(fakemodel.Reply{Reasoning: "half", Tool: "finish", Args: `{"summary":"x"}`, Cut: true},
		calls(call("finish", map[string]any{"summary": "second try"})))
	rec := h.execute(h.settings(nil), 0)
	if rec.Status != runs.StatusCompleted || rec.Summary != "second try" || rec.Steps != 1 {
		t.Fatalf("record %+v", rec)
	}
	if r := h.eventsOf(runs.EventRetry); len(r) != 1 || !strings.Contains(r[0].Error, "stream broke off") {
		t.Errorf("retry events %+v", r)
	}
	_, items, _ := h.onDisk(rec.ID)
	if strings.Contains(string(items[len(items)-2]), "half") {
		t.Error("the broken response's items were kept")
	}
}

func TestInterruptedByContext(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "INTERRUPT: stop me")
	stall := make(chan struct{})
	defer close(stall)
	h.script(calls(call("list_sessions", map[string]any{})), fakemodel.Reply{Text: "never", Stall: stall})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := Start(ctx, h.options(h.settings(nil), 0), h.key)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
		defer wcancel()
		h.srv.WaitRequests(wctx, 2)
		cancel()
	}()
	rec, err := r.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != runs.StatusInterrupted || rec.Steps != 1 || rec.Owner != nil {
		t.Fatalf("record %+v", rec)
	}
	if _, err := os.Stat(runs.RunDir(h.w.State, rec.ID)); err != nil {
		t.Fatal(err)
	}
}

// A tool call the wall-clock limit cuts short says so to the record,
// not the bare "context deadline exceeded". The run's only work is one
// model call and then a command that outlives the limit, so the limit
// can only end the command: 10 s leaves the model call room on a loaded
// machine, and the command waits far longer than that.
func TestWallClockLimitSaysItEndedACall(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "LIMIT time: wait forever")
	h.script(calls(call("exec_command", map[string]any{"cmd": "sleep 100", "yield_time_ms": 60000, "login": false})))
	rec := h.execute(h.settings(func(s *Settings) {
		s.Limits.Timeout = config.Duration{Duration: 10 * time.Second}
	}), 0)
	if rec.Status != runs.StatusLimited {
		t.Fatalf("the run should have been stopped by its 10s timeout (status %q), but it ended %q: %s", runs.StatusLimited, rec.Status, rec.StopReason)
	}
	var out string
	var seen []string
	for _, ev := range h.eventsOf(runs.EventToolResult) {
		seen = append(seen, ev.Tool)
		if ev.Tool == "exec_command" {
			out = ev.Output
		}
	}
	if out == "" {
		t.Fatalf("the timeout should have ended the exec_command call, but no exec_command result was recorded (tool results seen: %q; stop reason: %s)", seen, rec.StopReason)
	}
	if want := "the run's 10s timeout ended this call"; !strings.Contains(out, want) {
		t.Fatalf("the cut exec_command's result should say %q, but it was: %q", want, out)
	}
}

// A limit below a cent is said as given, never as $0.00.
func TestMaxCostBelowACent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "LIMIT cost: a little")
	h.srv.Fallback(calls(call("list_sessions", map[string]any{})))
	rec := h.execute(h.settings(func(s *Settings) { s.Limits.MaxCostUSD = 0.0005 }), 0)
	if rec.Status != runs.StatusLimited || !strings.Contains(rec.StopReason, "the limit is $0.0005 (max_cost)") || strings.Contains(rec.StopReason, "$0.00 ") {
		t.Fatalf("status %s, stop reason %q", rec.Status, rec.StopReason)
	}
}

package orchestrator

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

func TestResumeAfterInterruptReportsWorkersThatFinished(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "RESUME: carry on")
	g, open := gate(t)
	h.w.Script(map[string][]fakeagent.Step{"slow worker": append([]fakeagent.Step{fakeagent.WaitFile(g)}, fakeagent.Completes("slow worker done", 10)...)})
	stall := make(chan struct{})
	defer close(stall)
	h.script(calls(call("delegate", map[string]any{"task": "slow worker"})), fakemodel.Reply{Text: "never", Stall: stall},
		calls(call("finish", map[string]any{"summary": "resumed and done"})))
	ctx, cancel := context.WithCancel(context.Background())
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
	if err != nil || rec.Status != runs.StatusInterrupted || len(rec.Workers) != 1 {
		t.Fatalf("%+v %v", rec, err)
	}
	worker := rec.Workers[0]
	// The worker finishes while the run is stopped.
	open()
	wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
	defer wcancel()
	if _, err := h.w.Manager.Wait(wctx, []string{worker}, sessions.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	r2, err := Resume(context.Background(), h.options(h.settings(nil), 0), rec.ID[:6])
	if err != nil {
		t.Fatal(err)
	}
	rec2, err := r2.Execute(wctx)
	if err != nil || rec2.Status != runs.StatusCompleted || rec2.Summary != "resumed and done" || rec2.Steps != 2 {
		t.Fatalf("%+v %v", rec2, err)
	}
	reqs := h.requests()
	in := fakemodel.Input(reqs[len(reqs)-1].Body)
	obs := in[len(in)-1].Text
	mustContain(t, "the first observation after resume", obs, "has been resumed", worker+" completed (turn 1)", "Step 2 of 20")
	if in[1].Text != h.key || in[2].Name != "delegate" || in[3].Type != "function_call_output" {
		t.Errorf("the conversation did not carry over: %+v", in[:4])
	}
	if rec2.Usage.TotalTokens != 220 || rec2.WorkerUsage.TotalTokens != 20 {
		t.Errorf("usage %+v workers %+v", rec2.Usage, rec2.WorkerUsage)
	}
	if ev := h.eventsOf(runs.EventResumed); len(ev) != 1 || !strings.Contains(ev[0].Text, "was interrupted after 1 step") {
		t.Errorf("resumed events %+v", ev)
	}
}

// A crash at an awkward instant: the model's calls written, their
// results not, the last line torn, run.json still saying running.
func TestResumeRepairsWhatACrashLeft(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "CRASH: repair")
	r, err := Start(context.Background(), h.options(h.settings(nil), 0), h.key)
	if err != nil {
		t.Fatal(err)
	}
	id := r.ID()
	r.release() // the process "dies": the lock goes, nothing more is written
	dir := runs.RunDir(h.w.State, id)
	f, err := os.OpenFile(filepath.Join(dir, runs.ConversationFile), os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"E"}` + "\n" +
		`{"type":"function_call","id":"fc_1","call_id":"call_lost","name":"delegate","arguments":"{\"task\":\"x\"}"}` + "\n" +
		`{"type":"function_call_output","call_id":"cal`)
	f.Close()
	var raw runs.Record
	b, _ := os.ReadFile(filepath.Join(dir, runs.RecordFile))
	json.Unmarshal(b, &raw)
	raw.Owner = &proc.Ref{PID: os.Getpid(), Start: 1} // a pid of another time
	runs.WriteRecord(dir, &raw)

	shown, err := runs.LoadRecord(h.w.State, id)
	if err != nil || shown.Status != runs.StatusInterrupted || !strings.Contains(shown.StopReason, "ended without saving an outcome") {
		t.Fatalf("a dead run shows as %+v %v", shown, err)
	}
	h.script(calls(call("finish", map[string]any{"summary": "repaired"})))
	r2, err := Resume(context.Background(), h.options(h.settings(nil), 0), id)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r2.Execute(context.Background())
	if err != nil || rec.Status != runs.StatusCompleted {
		t.Fatalf("%+v %v", rec, err)
	}
	reqs := h.requests()
	var input []json.RawMessage
	for _, it := range fakemodel.Input(reqs[0].Body) {
		input = append(input, it.Raw)
	}
	if err := checkPairs(input); err != nil {
		t.Fatalf("the resumed request is invalid: %v", err)
	}
	mustContain(t, "request", string(reqs[0].Body), "the run stopped before this call returned", `"encrypted_content":"E"`)
	_, items, _ := h.onDisk(id)
	if err := checkPairs(items); err != nil {
		t.Fatal(err)
	}
	if ev := h.eventsOf(runs.EventResumed); len(ev) != 1 || !strings.Contains(ev[0].Text, "gave delegate call call_lost the result it never got") {
		t.Errorf("resumed %+v", ev)
	}
}

func TestResumeRefusesALiveRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "LIVE: hands off")
	r, err := Start(context.Background(), h.options(h.settings(nil), 0), h.key)
	if err != nil {
		t.Fatal(err)
	}
	defer r.release()
	if _, err := Resume(context.Background(), h.options(h.settings(nil), 0), r.ID()); err == nil ||
		!strings.Contains(err.Error(), "is running in process") {
		t.Fatalf("resume of a live run: %v", err)
	}
	if _, err := Resume(context.Background(), h.options(h.settings(nil), 0), "ffff"); err == nil || !strings.Contains(err.Error(), "no such run") {
		t.Fatalf("resume of nothing: %v", err)
	}
}

// A call_id the model already used (in an earlier response or twice in
// one) is not run: the call gets an error output saying why, and the run
// goes on.
func TestARepeatedCallIDIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "CALLID: twice")
	marker := filepath.Join(h.w.Work, "ran")
	run := func(id string) fakemodel.Call {
		c := call("exec_command", map[string]any{"cmd": "echo x >> " + marker, "yield_time_ms": 60000, "login": false})
		c.CallID = id
		return c
	}
	h.script(calls(run("call_same")), calls(run("call_same"), run("call_other"), run("call_other")),
		calls(call("finish", map[string]any{"summary": "done"})))
	rec := h.execute(h.settings(nil), 0)
	if rec.Status != runs.StatusCompleted {
		t.Fatalf("%+v", rec)
	}
	if b, _ := os.ReadFile(marker); strings.Count(string(b), "x") != 2 {
		t.Fatalf("the command ran %d times, want 2 (once per call_id)", strings.Count(string(b), "x"))
	}
	_, items, _ := h.onDisk(rec.ID)
	var refused []string
	for _, raw := range items {
		if it := inspect(raw); it.isOutput() && strings.Contains(it.outputText(), "was already used by an earlier call") {
			refused = append(refused, it.CallID)
		}
	}
	if strings.Join(refused, " ") != "call_same call_other" {
		t.Fatalf("refused calls: %v", refused)
	}
}

package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/proc"
)

// A run resumed with a limit it has used up already would stop at once,
// having rewritten its record (failed became limited), and say to resume
// with a limit that was then refused too: it is refused before anything
// changes, whatever stopped the run, with a limit above what it used.
func TestResumingWithALimitAlreadyUsedIsRefused(t *testing.T) {
	t.Parallel()
	w, _ := orchWorld(t)
	cost, workers := 1.2, 0.0
	rec := &runs.Record{Version: runs.RecordVersion, ID: "0199a213-81c0-7800-8aa1-000000000031", Task: "t", Model: "gpt-5.1", Dir: w.Work,
		Status: runs.StatusFailed, StopReason: "the model answered 10 times without a tool", Steps: 10,
		Limits: runs.Limits{MaxSteps: 50, MaxCostUSD: 5}, CostUSD: &cost, WorkerCostUSD: &workers, CreatedAt: time.Now().UTC()}
	dir := runs.RunDir(w.State, rec.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := runs.WriteRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(dir + "/run.json")
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--max-steps", "5"}, "has used 10 steps, and --max-steps is 5: resume it with a higher --max-steps (--max-steps 20)"},
		{[]string{"--max-steps", "10"}, "has used 10 steps, and --max-steps is 10: resume it with a higher --max-steps (--max-steps 20)"},
		{[]string{"--max-cost", "0.5"}, "has used $1.20 with its workers, and --max-cost is $0.50: resume it with a higher --max-cost (--max-cost 2.4)"},
	} {
		r := w.zwarm(append([]string{"orchestrate", "--resume", rec.ID[:8]}, tc.flags...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, %q", tc.flags, r.code, r.stderr)
		}
	}
	if after, _ := os.ReadFile(dir + "/run.json"); string(after) != string(before) {
		t.Fatalf("a refused resume changed the run:\n%s\n%s", before, after)
	}
	// What a run stopped at its cost limit is told to resume with is above
	// what it spent, not twice the limit it was given.
	rec.Status, rec.Limits.MaxCostUSD = runs.StatusLimited, 0.5
	if got := resumeCommand(newOrchestrateCmd(&factory{}), rec); !strings.HasSuffix(got, "--max-cost 2.4") {
		t.Fatalf("resume with: %s", got)
	}
}

// A run with nothing ended yet has no span to send: trace says so and
// exits 1, where it said "0 spans sent" and exited 0.
func TestTraceOfNothingYetSaysSo(t *testing.T) {
	t.Parallel()
	w, _ := orchWorld(t)
	self, err := proc.RefOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	rec := &runs.Record{Version: runs.RecordVersion, ID: "0199a213-81c0-7800-8aa1-000000000032", Task: "t", Model: "gpt-5.1", Dir: w.Work,
		Status: runs.StatusRunning, Owner: self, Limits: runs.Limits{MaxSteps: 50}, CreatedAt: time.Now().UTC()}
	dir := runs.RunDir(w.State, rec.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := runs.WriteRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	r := w.zwarm("trace", rec.ID[:8], "--endpoint", "http://127.0.0.1:9")
	if r.code != 1 || !strings.Contains(r.stderr, "has nothing to send yet") {
		t.Fatalf("exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
)

// The run of the fixtures and its two workers.
const (
	runID     = "7c1e0000-0000-4000-8000-000000000001"
	workerOne = "3f2a0011-0000-4000-8000-000000000011"
	workerTwo = "3f2a0012-0000-4000-8000-000000000012"
)

// addRun writes a run as `zwarm orchestrate` leaves it: run.json (a running
// run is owned by the test process) and events.jsonl.
func (f *fixture) addRun(id string, status runs.Status, task string, age time.Duration, steps int, events []runs.Event, opts ...func(*runs.Record)) {
	f.t.Helper()
	created := clock.Add(-age)
	cost, workerCost := 0.021, 0.0
	rec := runs.Record{Version: runs.RecordVersion, ID: id, Task: task, Model: "gpt-5.1", Dir: "/w", Status: status,
		Steps: steps, Limits: runs.Limits{MaxSteps: 10, MaxWorkers: 4}, CreatedAt: created, UpdatedAt: created.Add(age / 2),
		Usage: record.Usage{InputTokens: 12000, OutputTokens: 800, TotalTokens: 12800}, CostUSD: &cost, WorkerCostUSD: &workerCost}
	if status == runs.StatusRunning {
		self, err := proc.RefOf(os.Getpid())
		if err != nil {
			f.t.Fatal(err)
		}
		rec.Owner = self
	} else {
		end := created.Add(age / 2)
		rec.EndedAt = &end
	}
	for _, o := range opts {
		o(&rec)
	}
	dir := runs.RunDir(f.dir, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		f.t.Fatal(err)
	}
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, ".run.json.tmp"), b, 0o600); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, ".run.json.tmp"), filepath.Join(dir, runs.RecordFile)); err != nil {
		f.t.Fatal(err)
	}
	f.appendEvents(id, events...)
}

// appendEvents appends to a run's events.jsonl as the run does.
func (f *fixture) appendEvents(id string, events ...runs.Event) {
	f.t.Helper()
	fh, err := os.OpenFile(filepath.Join(runs.RunDir(f.dir, id), runs.EventsFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		f.t.Fatal(err)
	}
	defer fh.Close()
	for _, ev := range events {
		ev.Run = id
		b, _ := json.Marshal(ev)
		fh.Write(append(b, '\n'))
	}
}

func args(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func money(v float64) *float64 { return &v }

// storySoFar is the first two steps of a run that delegates to two workers
// and waits for them: the model is thinking about step 3.
func storySoFar(task string) []runs.Event {
	lim := runs.Limits{MaxSteps: 10, MaxWorkers: 4}
	totals := func(model, workers float64, running int) *runs.Totals {
		return &runs.Totals{Usage: record.Usage{TotalTokens: 6400}, CostUSD: money(model), WorkerCostUSD: money(workers), WorkersRunning: running}
	}
	return []runs.Event{
		{Type: runs.EventStarted, Task: task, Model: "gpt-5.1", Dir: "/w", Limits: &lim},
		{Type: runs.EventModelCall, Step: 1},
		{Type: runs.EventModelResponse, Step: 1, Reasoning: "Two pieces that can run in parallel: the limiter and its tests."},
		{Type: runs.EventUsage, Step: 1, Totals: totals(0.01, 0, 0)},
		{Type: runs.EventToolCall, Step: 1, Tool: "delegate", Args: args(map[string]string{"task": "Add a token-bucket rate limiter", "model": "gpt-5.1-codex"})},
		{Type: runs.EventToolResult, Step: 1, Tool: "delegate", Output: `{"session_id":"` + workerOne + `","adapter":"codex","model":"gpt-5.1-codex"}`},
		{Type: runs.EventToolCall, Step: 1, Tool: "delegate", Args: args(map[string]string{"task": "Write the limiter's tests", "model": "gpt-5.1-codex"})},
		{Type: runs.EventToolResult, Step: 1, Tool: "delegate", Output: `{"session_id":"` + workerTwo + `","adapter":"codex","model":"gpt-5.1-codex"}`},
		{Type: runs.EventModelCall, Step: 2},
		{Type: runs.EventModelResponse, Step: 2, Text: "Both are running; waiting for both."},
		{Type: runs.EventUsage, Step: 2, Totals: totals(0.021, 0.0045, 2)},
		{Type: runs.EventToolCall, Step: 2, Tool: "wait", Args: args(map[string]any{"mode": "all", "timeout_s": 900})},
		{Type: runs.EventWorker, Step: 2, Session: workerTwo, Text: "worker 3f2a0012 completed"},
		{Type: runs.EventToolResult, Step: 2, Tool: "wait", Output: `{"finished":[{"session_id":"` + workerTwo + `","status":"completed"}],"running":["` + workerOne + `"],"timed_out":true}`},
		{Type: runs.EventModelCall, Step: 3},
	}
}

// orchestrated is the standard fixture with a running run: one worker
// still running, one done, and a person's sessions beside them.
func orchestrated(t *testing.T) *fixture {
	f := standard(t)
	task := "add rate limiting to the API, with tests"
	f.addRun(runID, runs.StatusRunning, task, 40*time.Second, 2, storySoFar(task))
	worker := func(s *record.Session) { s.Source = record.RunSource(runID) }
	f.add(0x11, record.StatusRunning, "Add a token-bucket rate limiter", 35*time.Second, worker)
	f.add(0x12, record.StatusCompleted, "Write the limiter's tests", 34*time.Second, worker)
	return f
}

// rewriteRun changes a run's record as the run does at a step's end.
func (f *fixture) rewriteRun(id string, change func(*runs.Record)) {
	f.t.Helper()
	path := filepath.Join(runs.RunDir(f.dir, id), runs.RecordFile)
	b, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	var rec runs.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		f.t.Fatal(err)
	}
	change(&rec)
	b, _ = json.Marshal(rec)
	if err := os.WriteFile(path+".tmp", b, 0o600); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		f.t.Fatal(err)
	}
}

package demo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/demo"
	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
)

var bins *testenv.Bins

func TestMain(m *testing.M) { testenv.Main(m, &bins) }

// The demo's orchestrated task runs to the end: the recorded model
// delegates to two replay workers, waits, checks one, looks at the
// workspace and finishes.
func TestRecordedRun(t *testing.T) {
	t.Setenv("ZWARM_REPLAY_SPEED", "40")
	w := testenv.New(t, bins, "")
	if err := demo.StageWorkers(w.State); err != nil {
		t.Fatal(err)
	}
	m, err := demo.NewModel(40)
	if err != nil {
		t.Fatal(err)
	}
	var shown []runs.Event
	opt := orchestrator.Options{Sessions: w.Manager, StateDir: w.State, Client: m,
		Settings: orchestrator.Settings{Model: demo.ModelName(), Dir: w.Work, Adapter: "replay", Limits: runs.Limits{MaxSteps: 10}},
		OnEvent:  func(ev runs.Event) { shown = append(shown, ev) }}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := orchestrator.Start(ctx, opt, demo.Task())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != runs.StatusCompleted || rec.Steps != 5 || len(rec.Workers) != 2 || !strings.Contains(rec.Summary, "recorded demo") {
		t.Fatalf("record %+v", rec)
	}
	if rec.CostUSD == nil || rec.WorkerCostUSD == nil || *rec.WorkerCostUSD <= 0 {
		t.Errorf("costs %v %v", rec.CostUSD, rec.WorkerCostUSD)
	}
	for _, id := range rec.Workers {
		s, err := w.Manager.Get(ctx, id)
		if err != nil || s.Status() != record.StatusCompleted || s.Adapter != "replay" || s.Source != record.RunSource(rec.ID) {
			t.Fatalf("worker %+v %v", s, err)
		}
	}
	var tools []string
	for _, ev := range shown {
		if ev.Type == runs.EventToolResult {
			if ev.IsError {
				t.Errorf("%s failed: %s", ev.Tool, ev.Output)
			}
			tools = append(tools, ev.Tool)
			if ev.Tool == "exec_command" && !strings.Contains(ev.Output, "recorded workers") {
				t.Errorf("exec_command: %s", ev.Output)
			}
			if ev.Tool == "check_session" && !strings.Contains(ev.Output, "internal/ratelimit/bucket.go") {
				t.Errorf("check_session: %s", ev.Output)
			}
		}
	}
	if got := strings.Join(tools, " "); got != "delegate delegate wait check_session exec_command finish" {
		t.Errorf("tools %s", got)
	}
}

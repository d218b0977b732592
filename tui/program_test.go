package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/model"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
)

// stepper is an orchestrating model that answers when the test says so,
// each answer a tool call ("name {args}").
type stepper struct{ replies chan string }

func (s *stepper) Respond(ctx context.Context, _ *model.Request) (*model.Response, error) {
	select {
	case call := <-s.replies:
		name, args, _ := strings.Cut(call, " ")
		if args == "" {
			args = "{}"
		}
		b, _ := json.Marshal(map[string]any{"type": "function_call", "id": "fc_" + name, "call_id": fmt.Sprintf("call_%s_%d", name, time.Now().UnixNano()),
			"name": name, "arguments": args, "status": "completed"})
		return &model.Response{ID: "resp", Output: []json.RawMessage{b}, Usage: record.Usage{InputTokens: 900, OutputTokens: 100, TotalTokens: 1000}}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// The whole program on a real run: `zwarm orchestrate`'s loop runs in the
// test, driven step by step; the dashboard shows the run's row with its
// worker under it beside a person's session, and the run's steps as they
// are written.
func TestDashboardFollowsARealRun(t *testing.T) {
	f := newFixture(t)
	f.add(1, record.StatusCompleted, "a person's own task", time.Hour)
	step := &stepper{replies: make(chan string)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run, err := orchestrator.Start(ctx, orchestrator.Options{Sessions: f.m, StateDir: f.dir, Client: step,
		Settings: orchestrator.Settings{Model: "gpt-5.1", Dir: t.TempDir(), Limits: runs.Limits{MaxSteps: 5}}}, "ship the rate limiter")
	if err != nil {
		t.Fatal(err)
	}
	executed := make(chan *runs.Record, 1)
	go func() {
		rec, _ := run.Execute(ctx)
		executed <- rec
	}()
	defer func() { cancel(); <-executed }()
	worker := f.add(2, record.StatusRunning, "write the limiter", time.Minute, func(s *record.Session) { s.Source = record.RunSource(run.ID()) })
	short := record.ShortID(run.ID())

	tm := teatest.NewTestModel(t, New(ctx, Options{Sessions: f.m, Runs: RunsOf(f.dir), StateDir: "/state"}),
		teatest.WithInitialTermSize(120, 40))
	waitFor := func(what ...string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
			for _, w := range what {
				if !bytes.Contains(b, []byte(w)) {
					return false
				}
			}
			return true
		}, teatest.WithDuration(15*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	waitFor("run:"+short+" ● running · step 0/5", "└ "+record.ShortID(worker), "a person's own task",
		"runs: ● 1 running", "task: ship the rate limiter", "… step 1/5 · the model is thinking")

	step.replies <- "list_sessions"
	waitFor("step 1/5 · ", "→ list_sessions", "← 1 workers, 0 need attention")

	step.replies <- `finish {"summary":"the limiter ships"}`
	rec := <-executed
	if rec.Status != runs.StatusCompleted {
		t.Fatalf("the run %s", rec.Status)
	}
	executed <- rec
	waitFor("completed after 2 steps: ", "» the limiter ships", "✓ completed · step 2/5", "runs: ✓ 1 completed")

	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if fm, ok := tm.FinalModel(t).(Model); ok {
		fm.Close()
	}
}

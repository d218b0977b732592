package watchers

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// history scripts a run step by step, as the orchestrator would show it
// to the watchers.
type history struct {
	v    RunView
	t    time.Time
	done int // steps done
}

func newHistory(task string) *history {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return &history{v: RunView{RunID: "run-1", Task: task, Model: "gpt-5.1", Limits: Limits{MaxSteps: 50, MaxWorkers: 4},
		Changes: map[string][]record.FileChange{}, Started: t0}, t: t0}
}

// step adds a step with these calls (and the model's text, if any).
func (h *history) step(text string, calls ...Call) *history {
	h.done++
	if text != "" {
		h.v.Messages = append(h.v.Messages, Message{Step: h.done, Kind: "message", Text: text})
	}
	for _, c := range calls {
		h.t = h.t.Add(time.Second)
		c.Step, c.At = h.done, h.t
		h.v.Calls = append(h.v.Calls, c)
	}
	h.t = h.t.Add(time.Second)
	return h
}

// worker adds a worker started now, running until end is called.
func (h *history) worker(id string) *record.Session {
	owner := proc.Ref{PID: 1, Start: 1}
	s := new(sessionstest.WithStatus(record.Session{ID: id, Task: "task of " + id, CreatedAt: h.t, Owner: &owner}, record.StatusRunning))
	h.t = h.t.Add(time.Second)
	h.v.Workers = append(h.v.Workers, s)
	return s
}

func (h *history) end(s *record.Session, st record.Status) {
	end := h.t
	sessionstest.SetStatus(s, st)
	s.Owner, s.EndedAt = nil, &end
	h.t = h.t.Add(time.Second)
}

// view is what the watchers see before the next step. It shares the
// history's slices: watchers only read a view, and the history only
// appends.
func (h *history) view() *RunView {
	v := h.v
	v.Step = h.done + 1
	return &v
}

func call(name string, args any) Call {
	b, _ := json.Marshal(args)
	return Call{Name: name, Args: b, Output: "ok " + name}
}

func callOut(name string, args any, output string) Call {
	c := call(name, args)
	c.Output = output
	return c
}

// ask asks w about the coming step and checks the answer's action.
func ask(t *testing.T, w RunWatcher, h *history, want Action) Verdict {
	t.Helper()
	v := w.Check(context.Background(), h.view())
	if v.Action == "" {
		v.Action = Continue
	}
	if v.Action != want {
		t.Fatalf("%s before step %d: %s %q, want %s", w.Name(), h.done+1, v.Action, v.Message, want)
	}
	return v
}

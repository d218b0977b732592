package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/watchers"
)

// Resume takes up an interrupted, limited or failed run where it stopped:
// the same conversation (repaired if a crash cut it), the same workers,
// with opt.Settings (the caller decides what a resumed run keeps; its dir
// is always the run's). Workers that finished meanwhile are reported in
// the first observation.
func Resume(ctx context.Context, opt Options, idOrPrefix string) (*Run, error) {
	id, err := runs.ResolveRun(opt.StateDir, idOrPrefix)
	if err != nil {
		return nil, err
	}
	dir := runs.RunDir(opt.StateDir, id)
	rec, err := runs.ReadRecord(dir)
	if err != nil {
		return nil, err
	}
	if rec.Status.Live() && rec.Owner.Alive() {
		return nil, fmt.Errorf("run %s is running in process %d; stop it first (Ctrl+C in its terminal) or let it finish", record.ShortID(id), rec.Owner.PID)
	}
	opt.Settings.Dir = rec.Dir
	opt.Settings.Pilot = rec.Pilot // its conversation was begun for it
	set, err := checkOptions(&opt)
	if err != nil {
		return nil, err
	}
	r := &Run{opt: opt, set: set, dir: dir, rec: rec, resumed: true}
	r.initPerson()
	if rec.Accounts == nil {
		rec.Accounts = map[string]runs.Account{}
	}
	if err := r.open(); err != nil {
		r.release()
		return nil, err
	}
	notes, err := r.load()
	if err != nil {
		r.release()
		return nil, err
	}
	r.reconcileInbox()
	prev := rec.Status
	if rec.Status.Live() {
		prev = runs.StatusInterrupted // its process died
	}
	now := time.Now().UTC()
	r.mu.Lock()
	rec.Status, rec.StopReason, rec.Summary, rec.EndedAt, rec.Question = runs.StatusRunning, "", "", nil, nil
	rec.Model, rec.Limits = set.Model, set.Limits
	rec.Adapter, rec.WorkerModel, rec.KillWorkersOnExit = set.Adapter, set.WorkerModel, set.KillWorkersOnExit
	rec.Isolation, rec.Runner, rec.Changes = set.Isolation, set.Runner, nil
	rec.UpdatedAt = now
	r.mu.Unlock()
	text := fmt.Sprintf("resumed a run that was %s after %s", prev, render.Plural(rec.Steps, "step"))
	if len(notes) > 0 {
		text += "; the conversation was repaired: " + strings.Join(notes, "; ")
	}
	lim := set.Limits
	r.emit(runs.Event{Type: runs.EventResumed, Step: rec.Steps, Model: set.Model, Limits: &lim, Text: text})
	opt.Log.Info("orchestrator: run resumed", "run", id, "steps", rec.Steps, "repairs", len(notes))
	if err := r.save(); err != nil {
		r.release()
		return nil, err
	}
	return r, nil
}

// load reads the conversation and the events back: the conversation is
// repaired if a crash left it invalid, and the step count, the model's
// usage and the call history are rebuilt from the events, which are
// written before run.json.
func (r *Run) load() ([]string, error) {
	lines, err := runs.ReadLines(filepath.Join(r.dir, runs.ConversationFile))
	if err != nil {
		return nil, err
	}
	var items []json.RawMessage
	var notes []string
	for i, l := range lines {
		if !json.Valid(l) {
			notes = append(notes, fmt.Sprintf("dropped line %d, which is not JSON", i+1))
			continue
		}
		items = append(items, json.RawMessage(l))
	}
	if len(items) < 2 {
		return nil, fmt.Errorf("run %s has no conversation to resume (%s is missing or empty)", r.rec.ID, runs.ConversationFile)
	}
	fixed, more := repair(items)
	notes = append(notes, more...)
	if len(notes) > 0 {
		if err := runs.RewriteJournal(r.convo, fixed); err != nil {
			return nil, err
		}
	}
	r.items = fixed
	events, err := runs.ReadEvents(r.opt.StateDir, r.rec.ID)
	if err != nil {
		return nil, err
	}
	r.replay(events)
	r.traceWith(events)
	return notes, nil
}

// replay rebuilds the counters and the history a guard reads.
func (r *Run) replay(events []runs.Event) {
	steps := 0
	var usage record.Usage
	cost := new(float64)
	priced := true
	calls := map[string]int{}
	for _, ev := range events {
		switch ev.Type {
		case runs.EventUsage:
			steps = max(steps, ev.Step)
			if ev.Usage != nil {
				usage = usage.Add(*ev.Usage)
			}
			if ev.CostUSD == nil {
				priced = false
			} else {
				*cost = record.RoundCost(*cost + *ev.CostUSD)
			}
		case runs.EventToolCall:
			calls[ev.CallID] = len(r.calls)
			r.calls = append(r.calls, watchers.Call{Step: ev.Step, ID: ev.CallID, Name: ev.Tool, Args: ev.Args, At: ev.Time})
		case runs.EventToolResult:
			if i, ok := calls[ev.CallID]; ok {
				r.calls[i].Output, r.calls[i].IsError = ev.Output, ev.IsError
			}
		case runs.EventGuard:
			if ev.Action == runs.ActionNudge {
				r.nudges = append(r.nudges, watchers.Nudged{Step: ev.Step, Watcher: ev.Watcher, Message: ev.Text})
				if r.toldBefore == nil {
					r.toldBefore = map[string]int{}
				}
				r.toldBefore[nudgeKey(ev.Watcher, ev.Text)]++
			}
		case runs.EventQuestion:
			r.asked[ev.QuestionID] = ev.Text
			r.unanswered = &runs.Question{ID: ev.QuestionID, Text: ev.Text, Options: ev.Options, AskedAt: ev.Time}
		case runs.EventAnswer:
			r.answered[ev.QuestionID] = true
		case runs.EventMessage:
			if ev.QuestionID != "" {
				r.answered[ev.QuestionID] = true
			}
		case runs.EventModelResponse:
			r.unanswered = nil // the model went on without the answer
			if ev.Text != "" {
				r.messages = append(r.messages, watchers.Message{Step: ev.Step, Kind: "message", Text: ev.Text})
			}
			if ev.Reasoning != "" {
				r.messages = append(r.messages, watchers.Message{Step: ev.Step, Kind: "reasoning", Text: ev.Reasoning})
			}
		}
	}
	if !priced {
		cost = nil
	}
	r.rec.Steps, r.rec.Usage, r.rec.CostUSD = steps, usage, cost
}

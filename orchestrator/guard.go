package orchestrator

import (
	"context"
	"encoding/json"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"time"

	"github.com/zwarm/zwarm/sessions"
)

// Verdict is one watcher's answer.
type Verdict struct {
	Watcher string
	Action  runs.Action
	Message string
}

// Guard is asked before every model call. The most severe verdict wins
// (abort, then pause); every nudge is added; each verdict other than
// continue is written to events.jsonl. Check must not block for long: the
// run waits for it.
type Guard interface {
	Check(ctx context.Context, v *View) []Verdict
}

// NoGuard lets every step run.
type NoGuard struct{}

// Check implements Guard.
func (NoGuard) Check(context.Context, *View) []Verdict { return nil }

// View is what a guard reads: the run so far. It is a snapshot; the guard
// may keep it.
type View struct {
	RunID, Task, Model string
	// Step is the step about to run, from 1.
	Step   int
	Limits runs.Limits
	// Usage and CostUSD are the model's (nil: price unknown); the worker
	// ones are the workers'.
	Usage         sessions.Usage
	CostUSD       *float64
	WorkerUsage   sessions.Usage
	WorkerCostUSD *float64
	// Workers are the run's workers as they are now, newest first.
	Workers []*sessions.Session
	// Calls are every tool call so far, oldest first; Messages the model's
	// text and reasoning summaries.
	Calls    []CallRecord
	Messages []MessageRecord
	// Nudges are the nudges the run was given, oldest first, those before
	// a resume included.
	Nudges []NudgeRecord
	// Started is when this process took the run up; Elapsed counts from it.
	Started time.Time
	Elapsed time.Duration
}

// CallRecord is one tool call and its result.
type CallRecord struct {
	Step    int
	CallID  string
	Name    string
	Args    json.RawMessage
	Output  string // bounded
	IsError bool
	At      time.Time
}

// NudgeRecord is a nudge the run was given before a step.
type NudgeRecord struct {
	Step    int
	Watcher string
	Message string
}

// MessageRecord is text the model produced.
type MessageRecord struct {
	Step int
	Kind string // "message" or "reasoning"
	Text string
}

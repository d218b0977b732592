package watchers

import (
	"encoding/json"
	"github.com/zwarm/zwarm/sessions/record"
	"sort"
	"time"
)

// RunView is what a run watcher reads: the run so far, before the step
// it is asked about. It is a snapshot that watchers only read.
type RunView struct {
	RunID, Task, Model string
	// Step is the step about to run, from 1; Step-1 steps are done.
	Step   int
	Limits Limits
	// Usage and CostUSD are the orchestrating model's (nil: price
	// unknown); the worker ones the workers'.
	Usage         record.Usage
	CostUSD       *float64
	WorkerUsage   record.Usage
	WorkerCostUSD *float64
	// Workers are the run's workers as they are now.
	Workers []*record.Session
	// Calls are the tool calls so far and Messages the model's text and
	// reasoning, oldest first, each with the step that made it.
	Calls    []Call
	Messages []Message
	// Nudges are the nudges the run was given, oldest first, those before
	// a resume included: a watcher new to a resumed run learns from them
	// what it already said.
	Nudges []Nudged
	// Changes are the files each worker changed (by session id), from
	// their file_change events, in the order first changed.
	Changes map[string][]record.FileChange
	Started time.Time
	Elapsed time.Duration
}

// Limits bound a run; 0 is no limit.
type Limits struct {
	MaxSteps   int
	MaxCostUSD float64
	MaxTokens  int64
	MaxWorkers int
}

// Call is one tool call of the run and its result.
type Call struct {
	Step    int
	ID      string
	Name    string
	Args    json.RawMessage
	Output  string
	IsError bool
	At      time.Time
}

// Nudged is a nudge the run was given before a step.
type Nudged struct {
	Step    int
	Watcher string
	Message string
}

// Message is text the model produced: Kind is "message" or "reasoning".
type Message struct {
	Step int
	Kind string
	Text string
}

// Tokens are the run's tokens, the model's and its workers'.
func (v *RunView) Tokens() int64 { return v.Usage.TotalTokens + v.WorkerUsage.TotalTokens }

// Cost is the run's cost and whether every price was known.
func (v *RunView) Cost() (float64, bool) {
	c, known := 0.0, true
	for _, p := range []*float64{v.CostUSD, v.WorkerCostUSD} {
		if p == nil {
			known = false
		} else {
			c += *p
		}
	}
	return c, known
}

// callsFrom returns the index of the first call of step from or later:
// calls are in step order.
func (v *RunView) callsFrom(step int) int {
	return sort.Search(len(v.Calls), func(i int) bool { return v.Calls[i].Step >= step })
}

func (v *RunView) messagesFrom(step int) int {
	return sort.Search(len(v.Messages), func(i int) bool { return v.Messages[i].Step >= step })
}

// running counts the workers not settled.
func (v *RunView) running() int {
	n := 0
	for _, s := range v.Workers {
		if !s.Settled() {
			n++
		}
	}
	return n
}

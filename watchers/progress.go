package watchers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/render"
)

// progress notices a run going round in circles: the same call again and
// again, the same result again and again, waits that bring nothing, and
// workers that were started and never finish.
type progress struct {
	cfg ProgressConfig
	// What was already reported: the number of calls seen when a rule
	// last fired, and the worker whose idleness was reported.
	sameAt, outputAt, waitAt int
	idleSince                time.Time
	looked                   bool
}

func newProgress(cfg ProgressConfig) *progress { return &progress{cfg: cfg} }

func (p *progress) Name() string { return "progress" }

func (p *progress) Check(_ context.Context, v *RunView) Verdict {
	n := len(v.Calls)
	if !p.looked {
		// A resumed run's history was judged before it stopped.
		p.looked = true
		p.sameAt, p.outputAt, p.waitAt = n, n, n
	}
	var out Verdict
	better := func(c Verdict) {
		if c.Action.Severity() > out.Action.Severity() {
			out = c
		}
	}
	if n > 0 && n != p.sameAt {
		if k := sameCalls(v.Calls); k >= p.cfg.Repeats {
			p.sameAt = n
			c := v.Calls[n-1]
			what := fmt.Sprintf("%s with the same arguments %d times in a row (%s)", c.Name, k, render.Clip(string(c.Args), 120))
			if p.cfg.AbortRepeats > 0 && k >= p.cfg.AbortRepeats {
				better(Verdict{Action: Abort, Message: "the model called " + what + " and does not stop"})
			} else {
				better(Verdict{Action: Nudge, Message: "You called " + what + ". Its result will not change: do something else, " +
					"or if you are waiting for workers, call wait once with a longer timeout."})
			}
		}
	}
	if n > 0 && n != p.outputAt && out.Action == "" {
		if k := sameOutputs(v.Calls); k >= p.cfg.Repeats {
			p.outputAt = n
			better(Verdict{Action: Nudge, Message: fmt.Sprintf("Your last %d tool calls returned the same output (%s). "+
				"Repeating them will not change it: take another approach.", k, render.Clip(v.Calls[n-1].Output, 120))})
		}
	}
	if n > 0 && n != p.waitAt && out.Action == "" {
		if k := emptyWaits(v.Calls); k >= p.cfg.EmptyWaits {
			p.waitAt = n
			better(Verdict{Action: Nudge, Message: fmt.Sprintf("Your last %d waits returned no finished worker. Look at what "+
				"the workers are doing (peek_session, get_trajectory); end one that is stuck (end_session) and delegate its task again.", k)})
		}
	}
	if out.Action == "" {
		if since, steps, running := p.idle(v); running > 0 && steps >= p.cfg.IdleSteps && !since.Equal(p.idleSince) {
			p.idleSince = since
			better(Verdict{Action: Nudge, Message: fmt.Sprintf("%d worker(s) running and none finished in the %d steps since "+
				"the oldest started. Check on them (peek_session) instead of waiting blindly; end and re-delegate one that is stuck.", running, steps)})
		}
	}
	return out
}

// repeatable calls are meant to be called again and again.
func repeatable(name string) bool { return name == "wait" || name == "sleep" }

// sameCalls is how many calls at the end are the same call with the same
// arguments.
func sameCalls(calls []Call) int {
	last := calls[len(calls)-1]
	if repeatable(last.Name) {
		return 0
	}
	key := canonical(last.Args)
	k := 1
	for i := len(calls) - 2; i >= 0; i-- {
		c := calls[i]
		if c.Name != last.Name || !bytes.Equal(canonical(c.Args), key) {
			break
		}
		k++
	}
	return k
}

// canonical is the arguments with their keys sorted and spacing dropped,
// so {"a":1, "b":2} and {"b":2,"a":1} are the same arguments.
func canonical(args json.RawMessage) []byte {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return bytes.TrimSpace(args)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return bytes.TrimSpace(args)
	}
	return b
}

// sameOutputs is how many calls at the end returned the same non-empty
// output (waits and sleeps aside: their outputs carry times).
func sameOutputs(calls []Call) int {
	last := calls[len(calls)-1]
	out := strings.TrimSpace(last.Output)
	if out == "" || repeatable(last.Name) {
		return 0
	}
	k := 1
	for i := len(calls) - 2; i >= 0 && strings.TrimSpace(calls[i].Output) == out; i-- {
		k++
	}
	return k
}

// emptyWaits is how many calls at the end are waits that returned no
// finished worker.
func emptyWaits(calls []Call) int {
	k := 0
	for i := len(calls) - 1; i >= 0; i-- {
		c := calls[i]
		if c.Name != "wait" || c.IsError {
			break
		}
		var r struct {
			Finished *[]json.RawMessage `json:"finished"`
		}
		if json.Unmarshal([]byte(c.Output), &r) != nil || r.Finished == nil || len(*r.Finished) > 0 {
			break
		}
		k++
	}
	return k
}

// idle finds the oldest running worker and counts the steps taken since
// it began, if no worker finished since then. A worker queued on its
// runner has not begun: steps taken while it waits are no lack of
// progress.
func (p *progress) idle(v *RunView) (since time.Time, steps, running int) {
	for _, s := range v.Workers {
		if began := s.Began(); !s.Settled() && !s.Queued() && !began.IsZero() {
			running++
			if since.IsZero() || began.Before(since) {
				since = began
			}
		}
	}
	if running == 0 {
		return since, 0, 0
	}
	for _, s := range v.Workers {
		if s.Settled() && s.EndedAt != nil && !s.EndedAt.Before(since) {
			return since, 0, running // one finished since: there is progress
		}
	}
	// The step that started it is the last call made before it appeared.
	i := sort.Search(len(v.Calls), func(i int) bool { return v.Calls[i].At.After(since) })
	started := 0
	if i > 0 {
		started = v.Calls[i-1].Step
	}
	return since, v.Step - 1 - started, running
}

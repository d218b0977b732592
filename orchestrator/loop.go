package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zwarm/zwarm/orchestrator/model"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/watchers"
)

// errWallClock is the cause of a run's context when its timeout passes.
var errWallClock = errors.New("the run's wall-clock limit was reached")

// outcome is how the loop ended.
type outcome struct {
	status  runs.Status
	reason  string
	summary string
	err     string // the failure in the API's or zwarm's own words
	// What ends a pilot turn but not the run (pilot.go): the model
	// answered, ctx ended (cut), the model call failed (callFailed).
	answered, cut, callFailed bool
}

// Execute runs the loop until the model calls finish, a limit is reached,
// the model API fails for good, a guard stops it or ctx ends (then the run
// is interrupted and --resume continues it). The outcome is in the
// returned record; an error means the state could not be written.
func (r *Run) Execute(ctx context.Context) (*runs.Record, error) {
	if r.set.Pilot {
		return r.Record(), errors.New("orchestrator: a pilot run goes turn by turn (Work, Turn), not Execute")
	}
	if t := r.set.Limits.Timeout.Duration; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t, errWallClock)
		defer cancel()
	}
	out, err := r.loop(ctx)
	if err != nil {
		out = outcome{status: runs.StatusFailed, reason: "zwarm could not record the run's state", err: err.Error()}
	}
	if serr := r.end(context.WithoutCancel(ctx), out); serr != nil && err == nil {
		err = serr
	}
	return r.Record(), err
}

func (r *Run) loop(ctx context.Context) (outcome, error) {
	for {
		if ctx.Err() != nil {
			return r.stopped(ctx), nil
		}
		r.refresh(ctx)
		r.readChangedFiles(ctx)
		if out, ok := r.limited(); ok {
			return out, nil
		}
		if out, ok := r.guard(ctx); ok {
			return out, nil
		}
		if err := r.askAgain(ctx); err != nil {
			return outcome{}, err
		}
		if err := r.deliverInbox(ctx); err != nil {
			return outcome{}, err
		}
		resp, err := r.call(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return r.stopped(ctx), nil
			}
			var apiErr *model.APIError
			reason := "the model API failed"
			if !errors.As(err, &apiErr) && !errors.Is(err, model.ErrStreamBroken) {
				reason = "the model call failed"
			}
			r.emit(runs.Event{Type: runs.EventNotice, Step: r.rec.Steps + 1, Error: err.Error(), Text: reason})
			return outcome{status: runs.StatusFailed, reason: reason, err: err.Error(), callFailed: true}, r.save()
		}
		if err := r.respond(ctx, resp); err != nil {
			return outcome{}, err
		}
		if err := r.save(); err != nil {
			return outcome{}, err
		}
		r.settleInbox()
		if r.summary != nil {
			return outcome{status: runs.StatusCompleted, reason: "the model called finish", summary: *r.summary}, nil
		}
		if r.answer != nil {
			return outcome{answered: true}, nil
		}
		if r.silent >= maxSilent {
			return outcome{status: runs.StatusFailed, reason: fmt.Sprintf("the model replied %d times in a row without calling a tool, "+
				"though reminded each time (a run ends when it calls finish)", r.silent)}, nil
		}
	}
}

// stopped is the outcome of a run whose context ended.
func (r *Run) stopped(ctx context.Context) outcome {
	if errors.Is(context.Cause(ctx), errWallClock) {
		reason := fmt.Sprintf("the wall-clock limit of %s was reached (timeout)", r.set.Limits.Timeout.Duration)
		r.emit(runs.Event{Type: runs.EventLimit, Step: r.rec.Steps, Limit: "timeout", Text: reason})
		return outcome{status: runs.StatusLimited, reason: reason, cut: true}
	}
	return outcome{status: runs.StatusInterrupted, reason: "interrupted (Ctrl+C or a signal); --resume continues it", cut: true}
}

// limited checks the limits before a step.
func (r *Run) limited() (outcome, bool) {
	lim := r.set.Limits
	rec := r.rec
	cost, _ := rec.TotalCost()
	name, reason := rec.Spent(lim), ""
	switch name {
	case "max_steps":
		reason = fmt.Sprintf("the run used its %d steps (max_steps)", lim.MaxSteps)
	case "max_cost":
		reason = fmt.Sprintf("the run and its workers spent %s, the limit is %s (max_cost)", render.Money(cost), render.Limit(lim.MaxCostUSD))
	case "max_tokens":
		reason = fmt.Sprintf("the run and its workers used %d tokens, the limit is %d (max_tokens)", rec.TotalTokens(), lim.MaxTokens)
	default:
		return outcome{}, false
	}
	r.emit(runs.Event{Type: runs.EventLimit, Step: rec.Steps, Limit: name, Text: reason})
	return outcome{status: runs.StatusLimited, reason: reason}, true
}

// guard asks the guard about the coming step: nudges join the
// conversation, a pause or an abort ends the run.
func (r *Run) guard(ctx context.Context) (outcome, bool) {
	verdicts := r.opt.Guard.Check(ctx, r.view())
	var stop *outcome
	for _, v := range verdicts {
		if v.Action == runs.ActionContinue || v.Action == "" {
			continue
		}
		if v.Action == runs.ActionNudge {
			// A nudge is given once: one given before the run stopped is
			// not repeated by a watcher that forgot it across the resume.
			if k := nudgeKey(v.Watcher, v.Message); r.toldBefore[k] > 0 {
				r.toldBefore[k]--
				continue
			}
			r.nudges = append(r.nudges, watchers.Nudged{Step: r.rec.Steps + 1, Watcher: v.Watcher, Message: v.Message})
		}
		r.emit(runs.Event{Type: runs.EventGuard, Step: r.rec.Steps + 1, Watcher: v.Watcher, Action: v.Action, Text: v.Message})
		switch v.Action {
		case runs.ActionNudge:
			if err := r.appendItems(message("developer", fmt.Sprintf("[watcher:%s] %s", v.Watcher, v.Message))); err != nil {
				r.opt.Log.Error("add a nudge", "err", err)
			}
		case runs.ActionAbort:
			stop = &outcome{status: runs.StatusFailed, reason: fmt.Sprintf("aborted by watcher %s: %s", v.Watcher, v.Message)}
		case runs.ActionPause:
			if stop == nil {
				stop = &outcome{status: runs.StatusInterrupted, reason: fmt.Sprintf("paused by watcher %s: %s; --resume continues it", v.Watcher, v.Message)}
			}
		}
	}
	if stop != nil {
		return *stop, true
	}
	return outcome{}, false
}

func nudgeKey(watcher, message string) string { return watcher + "\x00" + message }

// view is the run so far, for a guard: a snapshot it may keep.
func (r *Run) view() *watchers.RunView {
	rec := r.Record()
	lim := r.set.Limits
	return &watchers.RunView{RunID: rec.ID, Task: rec.Task, Model: rec.Model, Step: rec.Steps + 1,
		Limits: watchers.Limits{MaxSteps: lim.MaxSteps, MaxCostUSD: lim.MaxCostUSD, MaxTokens: lim.MaxTokens, MaxWorkers: lim.MaxWorkers},
		Usage:  rec.Usage, CostUSD: rec.CostUSD, WorkerUsage: rec.WorkerUsage, WorkerCostUSD: rec.WorkerCostUSD,
		Workers: append([]*record.Session(nil), r.workers...), Calls: append([]watchers.Call(nil), r.calls...),
		Messages: append([]watchers.Message(nil), r.messages...), Nudges: append([]watchers.Nudged(nil), r.nudges...), Started: r.started, Elapsed: time.Since(r.started)}
}

// end records the outcome: the shell's processes are ended, the workers
// too if asked, and run.json says how the run ended.
func (r *Run) end(ctx context.Context, out outcome) error {
	r.sh.Close()
	r.closeGroup() // what left the commands' sessions (setsid) is in it
	if r.set.KillWorkersOnExit {
		kctx, cancel := context.WithTimeout(ctx, time.Minute)
		for _, s := range r.workers {
			if !s.Settled() {
				if _, err := r.opt.Sessions.KillReport(kctx, s.ID, "the run ended and --kill-workers-on-exit stops its workers"); err != nil && !errors.Is(err, sessions.ErrNotRunning) {
					r.emit(runs.Event{Type: runs.EventNotice, Session: s.ID, Error: err.Error(), Text: "could not stop a worker"})
				}
			}
		}
		cancel()
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	r.refresh(rctx)
	cancel()
	now := time.Now().UTC()
	if out.err != "" {
		out.reason += ": " + out.err
	}
	r.mu.Lock()
	// The summary ends with what was landed and what was not, whatever
	// the model said: the user learns where the work is.
	changes := workerChanges(r.workers, r.rec.Workers)
	if text := ChangesText(changes); text != "" {
		out.summary = strings.TrimSpace(strings.TrimSpace(out.summary) + "\n\n" + text)
	}
	r.rec.Status, r.rec.StopReason, r.rec.Summary, r.rec.EndedAt, r.rec.Owner = out.status, out.reason, out.summary, &now, nil
	r.rec.Question = nil
	r.rec.Changes = changes
	r.mu.Unlock()
	r.emit(runs.Event{Type: runs.EventStopped, Step: r.rec.Steps, RunStatus: out.status, Reason: out.reason, Summary: out.summary, Error: out.err})
	r.opt.Log.Info("orchestrator: run stopped", "run", r.rec.ID, "status", out.status, "reason", out.reason, "steps", r.rec.Steps)
	err := r.save()
	if err == nil {
		r.settleInbox()
	}
	r.convo.Close()
	r.events.Close()
	r.lock.Unlock()
	return err
}

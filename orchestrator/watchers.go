package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/zwarm/zwarm/orchestrator/model"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/watchers"
)

// WatcherGuard is a Guard that asks the run watchers of e before each
// step. Run.Watch does more: worker watchers, the llm watcher on the
// run's client with its cost counted, problems written as notices.
func WatcherGuard(e *watchers.Engine) Guard {
	return &watcherGuard{engine: e, cfg: watchers.DefaultConfig()}
}

// watcherGuard turns the watchers' reports into the run's verdicts.
type watcherGuard struct {
	engine  *watchers.Engine
	cfg     *watchers.Config
	workers *watchers.Workers // nil: no worker watchers
	run     *Run              // nil: a bare guard
	prev    Guard             // a guard set before Watch, asked too
	// unpriced are the models whose unknown price was reported.
	unpriced map[string]bool

	mu     sync.Mutex
	alerts []watchers.Alert // worker alerts not yet told
	failed error            // the worker watchers stopped early
}

// Check implements Guard.
func (g *watcherGuard) Check(ctx context.Context, v *watchers.RunView) []Verdict {
	rv := *v
	if g.workers != nil {
		rv.Changes = g.workers.Changes()
	}
	rep := g.engine.Check(ctx, &rv)
	if g.run != nil {
		g.watched(v.Step, rep)
		g.mu.Lock()
		if g.failed != nil {
			g.run.emit(runs.Event{Type: runs.EventNotice, Step: v.Step, Error: g.failed.Error(), Text: "the worker watchers stopped"})
			g.failed = nil
		}
		g.mu.Unlock()
	}
	all := append(rep.Verdicts, g.workerVerdicts(v)...)
	out := ordered(all)
	if g.prev != nil {
		out = append(g.prev.Check(ctx, v), out...)
	}
	return out
}

// ordered sorts the verdicts most severe first, ties to the higher
// priority, and lays them out for the loop, which adds every nudge,
// stops at the first pause and lets a later abort override: nudges, then
// pauses (the winner first), then aborts (the winner last).
func ordered(vs []watchers.Verdict) []Verdict {
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if sa, sb := a.Action.Severity(), b.Action.Severity(); sa != sb {
			return sa > sb
		}
		return a.Priority > b.Priority
	})
	var nudges, pauses, aborts []Verdict
	for _, w := range vs {
		v := Verdict{Watcher: w.Watcher, Message: w.Message}
		switch w.Action {
		case watchers.Abort:
			v.Action = runs.ActionAbort
			aborts = append([]Verdict{v}, aborts...)
		case watchers.Pause:
			v.Action = runs.ActionPause
			pauses = append(pauses, v)
		case watchers.Nudge, watchers.Stop:
			v.Action = runs.ActionNudge
			nudges = append(nudges, v)
		}
	}
	return append(append(nudges, pauses...), aborts...)
}

// workerVerdicts turns the worker alerts that came since the last step
// into nudges naming the worker, dropping those the run made moot.
func (g *watcherGuard) workerVerdicts(v *watchers.RunView) []watchers.Verdict {
	g.mu.Lock()
	alerts := g.alerts
	g.alerts = nil
	g.mu.Unlock()
	now := map[string]*record.Session{}
	for _, s := range v.Workers {
		now[s.ID] = s
	}
	var out []watchers.Verdict
	for _, a := range alerts {
		s := now[a.SessionID]
		switch {
		case a.Watcher == "stall" && s != nil && s.Settled():
			continue // it ended meanwhile
		case a.Watcher == "overlap" && s != nil && s.Settled():
			// Its change still meets the other's (the watcher forgets it
			// once landed): the advice is for two finished changes now.
			a.Status = s.Status()
		case a.Watcher == "failure" && a.Status == record.StatusKilled && endedByModel(v, a.SessionID):
			continue // the model ended it itself
		}
		out = append(out, watchers.Verdict{Watcher: a.Watcher, Action: watchers.Nudge, Priority: g.priority(a.Watcher), Message: advice(a)})
	}
	return out
}

func (g *watcherGuard) priority(watcher string) int {
	switch watcher {
	case "stall":
		return g.cfg.Stall.Priority
	case "failure":
		return g.cfg.Failure.Priority
	case "hollow":
		return g.cfg.Hollow.Priority
	case "cost_guard":
		return g.cfg.CostGuard.Priority
	case "overlap":
		return g.cfg.Overlap.Priority
	}
	return 0
}

// advice is an alert as the model reads it: the worker's id, what the
// watcher saw, what to do.
func advice(a watchers.Alert) string {
	msg := fmt.Sprintf("Worker %s (%s): %s.", a.SessionID, render.Clip(a.Task, 80), render.Clip(a.Reason, 700))
	switch {
	case a.Watcher == "stall":
		msg += " Look at it (peek_session); if it is stuck, end it (end_session) and delegate its task again."
	case a.Watcher == "failure":
		msg += " Read why (check_session), then retry it (converse) or delegate the task again."
	case a.Watcher == "hollow":
		msg += " It did nothing: check it (check_session) and tell it what to do (converse), or delegate again."
	case a.Watcher == "overlap" && a.Status.Finished():
		msg += " Land one of them (land_session), then bring that into the other (update_session) before you land it."
	case a.Watcher == "overlap":
		msg += " Tell one of them to leave that file alone (converse), or let one finish and land before the other goes on."
	case a.Action == watchers.Stop:
		msg += " It has been stopped; if the work is still needed, delegate a smaller piece of it."
	}
	return msg
}

// endedByModel reports whether the model called end_session on the worker.
func endedByModel(v *watchers.RunView, id string) bool {
	for _, c := range v.Calls {
		if c.Name != "end_session" {
			continue
		}
		var a struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal(c.Args, &a) == nil && a.SessionID != "" && strings.HasPrefix(id, a.SessionID) {
			return true
		}
	}
	return false
}

// reviewModel serves the llm watcher with the run's model client.
type reviewModel struct{ client model.Client }

func (m reviewModel) Complete(ctx context.Context, p watchers.Prompt) (watchers.Completion, error) {
	resp, err := m.client.Respond(ctx, &model.Request{Model: p.Model,
		Input: []json.RawMessage{message("developer", p.Instructions), message("user", p.Input)}})
	if err != nil {
		return watchers.Completion{}, err
	}
	return watchers.Completion{Text: texts(resp.Output, false), Usage: resp.Usage}, nil
}

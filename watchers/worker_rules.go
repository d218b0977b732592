package watchers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
)

// worker is what the engine knows of one session.
type worker struct {
	s *record.Session
	// activity is the last sign of life: an event read, or the record's
	// LastEventAt. stalled is the silence already reported.
	activity time.Time
	stalled  time.Time
	// turns says, per turn, whether it printed a message or changed a file.
	turns   map[int]*turnSeen
	changes []record.FileChange
	index   map[string]int // path -> position in changes
	judged  int            // the turn count when the session last settled
	stopped bool           // cost_guard stopped it (or tried)
	// filesTurns is how many of its turns the overlap watcher has taken
	// the files of (or passed over, as settled history).
	filesTurns int
}

type turnSeen struct{ message, changed bool }

// handle applies the watchers to one update.
func (w *Workers) handle(ctx context.Context, u watch.Update, now time.Time) []Alert {
	w.mu.Lock()
	defer w.mu.Unlock()
	// The update marked Synced is the last of the initial state: the
	// sessions after it are news.
	if u.Synced {
		defer func() { w.synced = true }()
	}
	if u.Removed {
		w.forgetChanges(u.ID)
		delete(w.workers, u.ID)
		delete(w.standing, u.ID)
		return nil
	}
	s := u.Session
	if s == nil {
		return nil
	}
	st := w.workers[s.ID]
	fresh := st == nil
	if fresh {
		st = &worker{turns: map[int]*turnSeen{}, index: map[string]int{}}
		w.workers[s.ID] = st
	}
	wasSettled := !fresh && st.s.Settled()
	st.s = s
	// Events of an initial update were written before the engine looked:
	// they are history, not a sign of life now.
	if st.read(u.Events) && !u.Initial {
		st.activity = now
	}
	if s.LastEventAt != nil && s.LastEventAt.After(st.activity) {
		st.activity = *s.LastEventAt
	}
	if st.activity.After(st.stalled) || s.Settled() {
		w.clear(s.ID, "stall")
	}
	out := w.overlap(st, u, now)
	if !s.Settled() {
		if wasSettled || fresh {
			w.clear(s.ID, "failure", "hollow")
		}
		if a, ok := w.costGuard(ctx, st, now); ok {
			out = append(out, a)
		}
		return out
	}
	// A session that settled before the engine looked is history; one
	// that settles, or appears settled after the start, is news.
	news := (!fresh && !wasSettled) || (fresh && w.synced)
	if !news || st.judged == len(s.Turns) {
		return out
	}
	st.judged = len(s.Turns)
	for _, a := range []func(*worker, time.Time) (Alert, bool){w.failure, w.hollow} {
		if al, ok := a(st, now); ok {
			w.stand(al)
			out = append(out, al)
		}
	}
	return out
}

// read takes in the events of an update and reports whether there were
// any.
func (st *worker) read(batches []watch.TurnEvents) bool {
	some := false
	for _, b := range batches {
		if len(b.Events) == 0 {
			continue
		}
		some = true
		ts := st.turns[b.Turn.N]
		if ts == nil {
			ts = &turnSeen{}
			st.turns[b.Turn.N] = ts
		}
		for _, ev := range b.Events {
			switch ev.Type {
			case record.EventMessage:
				ts.message = ts.message || ev.Text != ""
			case record.EventFileChange:
				for _, c := range ev.Changes {
					ts.changed = true
					if i, ok := st.index[c.Path]; ok {
						st.changes[i].Kind = c.Kind
						continue
					}
					st.index[c.Path] = len(st.changes)
					st.changes = append(st.changes, c)
				}
			}
		}
	}
	return some
}

// next is when the earliest silence becomes a stall (zero: none).
func (w *Workers) next() time.Time {
	if !w.cfg.Stall.Enabled {
		return time.Time{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var due time.Time
	for _, st := range w.workers {
		sl, ok := w.cfg.Stall.silence(st.s, st.activity)
		if ok && !sl.since.Equal(st.stalled) && (due.IsZero() || sl.due.Before(due)) {
			due = sl.due
		}
	}
	return due
}

// tick reports the silences that became stalls by now, each once.
func (w *Workers) tick(now time.Time) []Alert {
	if !w.cfg.Stall.Enabled {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Alert
	for _, st := range w.workers {
		sl, ok := w.cfg.Stall.silence(st.s, st.activity)
		if !ok || sl.since.Equal(st.stalled) || now.Before(sl.due) {
			continue
		}
		st.stalled = sl.since
		a := alertFor(st.s, "stall", Nudge, w.cfg.Stall.reason(sl, now), now)
		w.stand(a)
		out = append(out, a)
	}
	return out
}

func (w *Workers) failure(st *worker, now time.Time) (Alert, bool) {
	s := st.s
	switch {
	case !w.cfg.Failure.Enabled, s.Status() == record.StatusCompleted:
		return Alert{}, false
	case s.Status() == record.StatusKilled && (!w.cfg.Failure.Killed || st.stopped):
		return Alert{}, false
	}
	why := s.Error
	if why == "" && len(s.Turns) > 0 {
		why = s.Turns[len(s.Turns)-1].Error
	}
	reason := string(s.Status())
	if s.ExitCode != nil && s.Status() == record.StatusFailed {
		reason += fmt.Sprintf(" (exit %d)", *s.ExitCode)
	}
	if why != "" {
		reason += ": " + cut(render.ErrorText(why), 400)
	}
	return alertFor(s, "failure", Nudge, reason, now), true
}

// hollow: a turn that completed without a message and without a change.
func (w *Workers) hollow(st *worker, now time.Time) (Alert, bool) {
	s := st.s
	if !w.cfg.Hollow.Enabled || s.Status() != record.StatusCompleted || len(s.Turns) == 0 {
		return Alert{}, false
	}
	t := s.Turns[len(s.Turns)-1]
	seen := st.turns[t.N]
	if t.LastMessage != "" || seen != nil && (seen.message || seen.changed) {
		return Alert{}, false
	}
	return alertFor(s, "hollow", Nudge, fmt.Sprintf("turn %d completed with no message and no file change", t.N), now), true
}

// costGuard stops a running worker past its token or cost cap, once; the
// alert comes when the stop is done.
func (w *Workers) costGuard(ctx context.Context, st *worker, now time.Time) (Alert, bool) {
	c, s := w.cfg.CostGuard, st.s
	if !c.Enabled || st.stopped {
		return Alert{}, false
	}
	var why string
	switch {
	case c.MaxTokens > 0 && s.Usage.TotalTokens > c.MaxTokens:
		why = fmt.Sprintf("it used %s tokens, its cap is %s (cost_guard max_tokens)", render.Tokens(s.Usage.TotalTokens), render.Tokens(c.MaxTokens))
	case c.MaxCost > 0 && s.CostUSD != nil && *s.CostUSD > c.MaxCost:
		why = fmt.Sprintf("it spent %s, its cap is %s (cost_guard max_cost)", render.Money(*s.CostUSD), render.Money(c.MaxCost))
	default:
		return Alert{}, false
	}
	st.stopped = true
	a := alertFor(s, "cost_guard", Stop, "stopped: "+why, now)
	if w.opt.Killer == nil {
		a.Action, a.Reason = Nudge, why+"; nothing here can stop it"
		w.stand(a)
		return a, true
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		_, err := w.opt.Killer.KillBecause(ctx, s.ID, "stopped by watcher cost_guard: "+why)
		if err != nil && !errors.Is(err, sessions.ErrNotRunning) {
			a.Action, a.Error = Nudge, err.Error()
			a.Reason = why + "; stopping it failed"
			w.opt.Log.Error("watchers: cost_guard could not stop a worker", "session", s.ID, "err", err)
		}
		a.At = time.Now().UTC()
		w.mu.Lock()
		w.stand(a)
		w.mu.Unlock()
		w.send(ctx, []Alert{a})
	}()
	return Alert{}, false
}

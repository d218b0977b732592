package watchers

import (
	"fmt"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
)

// silence is a running worker's current silence: since when it is
// silent, when that becomes a stall, and whether it has yet to print its
// turn's first event.
type silence struct {
	since, due time.Time
	first      bool
}

// silence finds the silence of s, whose last sign of life was at
// activity (zero: none seen). A settled session has none, nor one a
// person works in (attached): no agent of zwarm's runs it meanwhile; nor
// one queued on its runner (a job waiting in a cluster's queue): nothing
// of it runs yet, and its silence counts from its job's start.
func (c StallConfig) silence(s *record.Session, activity time.Time) (silence, bool) {
	if s.Settled() || s.Legacy || s.Status() == record.StatusAttached || s.Queued() {
		return silence{}, false
	}
	var t *record.Turn
	if len(s.Turns) > 0 {
		t = &s.Turns[len(s.Turns)-1]
	}
	switch {
	case t != nil && t.EndedAt == nil && activity.Before(t.StartedAt):
		return silence{since: t.StartedAt, due: t.StartedAt.Add(c.FirstEvent.Duration), first: true}, true
	case t != nil && t.EndedAt == nil:
		return silence{since: activity, due: activity.Add(c.After.Duration)}, true
	}
	// Waiting for a supervisor to start the first turn, or the next one
	// after a follow-up reopened it: that takes milliseconds.
	since := s.CreatedAt
	if t != nil && s.UpdatedAt.After(since) {
		since = s.UpdatedAt
	}
	if activity.After(since) {
		since = activity
	}
	return silence{since: since, due: since.Add(c.FirstEvent.Duration), first: true}, true
}

func (c StallConfig) reason(sl silence, now time.Time) string {
	if sl.first {
		return fmt.Sprintf("no first event %s after its turn started (first_event is %s)",
			render.Runtime(now.Sub(sl.since)), render.Runtime(c.FirstEvent.Duration))
	}
	return fmt.Sprintf("no event for %s (after is %s); the last was at %s",
		render.Runtime(now.Sub(sl.since)), render.Runtime(c.After.Duration), sl.since.UTC().Format("15:04:05 UTC"))
}

// Stalled tells from the record alone whether s is stalled at now under
// these thresholds, and why: a running session whose agent printed
// nothing for After, or nothing in its turn FirstEvent after the turn
// started. It reads LastEventAt, which the supervisor keeps current, so
// a listing can show a stalled session as such without following it.
// A disabled stall watcher finds nothing stalled.
func (c StallConfig) Stalled(s *record.Session, now time.Time) (string, bool) {
	if !c.Enabled {
		return "", false
	}
	var activity time.Time
	if s.LastEventAt != nil {
		activity = *s.LastEventAt
	}
	sl, ok := c.silence(s, activity)
	if !ok || now.Before(sl.due) {
		return "", false
	}
	return c.reason(sl, now), true
}

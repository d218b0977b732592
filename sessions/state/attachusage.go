package state

import (
	"time"

	"github.com/zwarm/zwarm/sessions/record"
)

// RecordAttachUsage puts what a person's attached span used, u, in its
// record (held under the session's lock, the span still the last): a
// thread's running total (cumulative, as the agent's session log gives
// it) is taken less what the thread had used before the span. It reports
// whether the record changed.
func RecordAttachUsage(s *record.Session, u record.Usage, cumulative bool) (recorded bool) {
	if len(s.Attaches) == 0 {
		return false
	}
	n := len(s.Attaches) - 1
	a := &s.Attaches[n]
	if cumulative {
		total := u
		u = total.Sub(threadSoFar(s, n))
		a.ThreadUsage = &total
	}
	if u == (record.Usage{}) {
		return cumulative // its total is recorded all the same
	}
	a.Usage = &u
	return true
}

// threadSoFar is the agent's last known running total for the thread: the
// latest to end of the turns and of the first spans attached spans that
// recorded one.
func threadSoFar(s *record.Session, spans int) record.Usage {
	var last *record.Usage
	var at time.Time
	take := func(u *record.Usage, end *time.Time) {
		if u == nil {
			return
		}
		e := time.Time{}
		if end != nil {
			e = *end
		}
		if last == nil || !e.Before(at) {
			last, at = u, e
		}
	}
	for i := range s.Turns {
		take(s.Turns[i].ThreadUsage, s.Turns[i].EndedAt)
	}
	for i := 0; i < spans && i < len(s.Attaches); i++ {
		take(s.Attaches[i].ThreadUsage, s.Attaches[i].End)
	}
	if last == nil {
		return record.Usage{}
	}
	return *last
}

// RecordAttachWork puts what the attached span left in the worktree, as
// committed, in the record (held under the session's lock, the span still
// the last): the span's commit and files, and the worktree's head and
// change, as a turn's are.
func RecordAttachWork(s *record.Session, w *TurnWork) {
	if w == nil || len(s.Attaches) == 0 {
		return
	}
	RecordWork(s, 0, w)
	if w.Err != "" {
		return
	}
	a := &s.Attaches[len(s.Attaches)-1]
	a.Commit, a.Files = w.Commit, w.Files
	if len(a.Files) > record.MaxTurnFiles {
		a.Files = a.Files[:record.MaxTurnFiles]
	}
}

package state

import (
	"time"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
)

// AttachSpent is what the agent's own logs say of a person's attached
// span: what the session's thread used in it, and the new conversation
// they started in the CLI and left it in, if any, with what that used.
type AttachSpent struct {
	Usage                         record.Usage
	Cumulative, Known             bool
	Thread                        string
	ThreadUsage                   record.Usage
	ThreadCumulative, ThreadKnown bool
}

// ReadAttachSpent asks ad's logs what the last span of s, ended at end,
// used, and in which thread the person left the CLI; nil when ad keeps no
// logs zwarm reads. A new thread is looked for only in a worktree, where
// nothing but the person's CLI runs the agent while they are attached: in
// a dir that others share, another conversation could be anyone's.
func ReadAttachSpent(ad agent.Adapter, s *record.Session, worktree bool, end time.Time) *AttachSpent {
	acc, ok := ad.(agent.AttachAccountant)
	if !ok || len(s.Attaches) == 0 || s.ThreadID == "" {
		return nil
	}
	start := s.Attaches[len(s.Attaches)-1].Start
	sp := &AttachSpent{}
	sp.Usage, sp.Cumulative, sp.Known = acc.AttachUsage(s.ThreadID, start, end)
	if f, ok := ad.(agent.ThreadFinder); ok && worktree {
		if ts := f.ThreadsSince(s.WorkingDir, start, s.ThreadID); len(ts) > 0 {
			sp.Thread = ts[len(ts)-1]
			var u record.Usage
			u, sp.ThreadCumulative, sp.ThreadKnown = acc.AttachUsage(sp.Thread, start, end)
			sp.ThreadUsage = u.WithTotal()
		}
	}
	sp.Usage = sp.Usage.WithTotal()
	return sp
}

// RecordAttachSpent puts sp in the record (held under the session's lock,
// the span still the last): its usage, and the thread the session goes on
// in. It reports whether the record changed.
func RecordAttachSpent(s *record.Session, sp *AttachSpent) bool {
	changed := sp.Known && RecordAttachUsage(s, sp.Usage, sp.Cumulative)
	if sp.Thread == "" || len(s.Attaches) == 0 {
		return changed
	}
	a := &s.Attaches[len(s.Attaches)-1]
	a.Thread, s.ThreadID = sp.Thread, sp.Thread
	if sp.ThreadKnown {
		// A new thread's log counts it from nothing: all of it is the
		// span's, and, for an agent that counts running totals, it is
		// what the next turn's usage is counted from.
		u := sp.ThreadUsage
		if a.Usage != nil {
			u = u.Add(*a.Usage)
		}
		a.Usage = &u
		if sp.ThreadCumulative {
			t := sp.ThreadUsage
			a.ThreadUsage = &t
		}
	}
	return true
}

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

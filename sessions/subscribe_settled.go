package sessions

import (
	"os"
	"time"

	"github.com/zwarm/zwarm/sessions/index"
	"github.com/zwarm/zwarm/sessions/record"
)

// A subscription to every session watches the directories of the sessions
// that are not settled, not those of the settled ones: a watch costs the
// kernel memory and the subscription a system call each, and a state dir
// may hold 100,000 settled sessions. A settled record changes through
// zwarm only when a follow-up reopens it or a landing records itself, and
// both advance sessions.gen first (index.go); when a writer of it closes
// it (genWatch) and the generation moved, the settled sessions' records
// are checked against the files they were read from, one stat each, and
// those that changed are looked at again. Bookkeeping that changes no
// settled session's summary (a kill's or a landing's claim let go) is
// not reported then, and neither is a record edited behind zwarm's back;
// a new subscription reads both.

// settledSet is the settled sessions whose dirs a subscription does not
// watch, with the identity of the meta.json each was read from.
type settledSet struct {
	l    *Listing
	off  []bool // the listing's entries no longer in the set
	keys map[string]index.Key
}

func newSettledSet(l *Listing) *settledSet {
	return &settledSet{l: l, off: make([]bool, l.Len()), keys: map[string]index.Key{}}
}

// listed is where id is in the listing while the listing still stands for
// it.
func (ss *settledSet) listed(id string) (int, bool) {
	i, ok := ss.l.Find(id)
	if !ok || ss.off[i] {
		return 0, false
	}
	return i, true
}

// add puts a settled session in the set, read from the file key names.
func (ss *settledSet) add(id string, key index.Key) {
	if i, ok := ss.listed(id); ok {
		if ss.l.keys[i] == key {
			return
		}
		ss.off[i] = true
	}
	ss.keys[id] = key
}

// drop takes a session out of the set: it is not settled, or gone.
func (ss *settledSet) drop(id string) {
	if i, ok := ss.listed(id); ok {
		ss.off[i] = true
	}
	delete(ss.keys, id)
}

// changed is the sessions of the set whose meta.json is not the file it
// was read from any more (changed, or gone), one stat each.
func (ss *settledSet) changed(sessionsDir string) []string {
	dir, err := os.Open(sessionsDir)
	if err != nil {
		// No sessions dir: every one of them is gone.
		return ss.all()
	}
	defer dir.Close()
	checks := make([]fileCheck, 0, ss.l.Len()+len(ss.keys))
	for i := range ss.l.briefs {
		if !ss.off[i] {
			checks = append(checks, fileCheck{ss.l.briefs[i].id, ss.l.keys[i]})
		}
	}
	for id, key := range ss.keys {
		checks = append(checks, fileCheck{id, key})
	}
	var out []string
	for i, same := range sameFiles(int(dir.Fd()), checks) {
		if !same {
			out = append(out, checks[i].ID)
		}
	}
	return out
}

func (ss *settledSet) all() []string {
	var out []string
	for i := range ss.l.briefs {
		if !ss.off[i] {
			out = append(out, ss.l.briefs[i].id)
		}
	}
	for id := range ss.keys {
		out = append(out, id)
	}
	return out
}

// has reports whether id is in the set.
func (ss *settledSet) has(id string) bool {
	if _, ok := ss.listed(id); ok {
		return true
	}
	_, ok := ss.keys[id]
	return ok
}

// listedState is what a subscription with a Listing knows of a session the
// listing holds and no update has told of yet: what the listing says.
func (s *Subscription) listedState(id string) (*subState, bool) {
	if s.settled == nil || !s.opt.Listing {
		return nil, false
	}
	i, ok := s.settled.listed(id)
	if !ok {
		return nil, false
	}
	b := &s.settled.l.briefs[i]
	return &subState{status: b.status, turns: int(b.turn), ended: int(b.turn), stamp: time.Unix(0, b.updated).UTC(),
		inbox: map[string]record.InboxState{}}, true
}

// watchUnsettled watches the dir of a session that is not settled (or
// whose record cannot be read), for every session.
func (s *Subscription) watchUnsettled(id string) {
	if s.settled != nil {
		s.settled.drop(id)
	}
	s.src.watchDir(id, true)
}

// settledChanged is the settled sessions to look at again once a writer
// of sessions.gen is done: none while the generation is the one they
// were checked at, or while a writer holds it (its close tells when it is
// done); else those whose records changed.
func (s *Subscription) settledChanged() []string {
	if s.settled == nil {
		return nil
	}
	gen, ok := s.m.st.PeekGeneration()
	if !ok || s.genOK && gen == s.gen {
		return nil
	}
	s.gen, s.genOK = gen, true
	return s.settled.changed(s.m.st.SessionsDir())
}

// appendNew appends to ids those of more it does not hold.
func appendNew(ids, more []string) []string {
	if len(more) == 0 {
		return ids
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	for _, id := range more {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

package watch

import (
	"github.com/zwarm/zwarm/sessions/record"
)

// listedState is what a subscription with a Listing knows of a session the
// listing holds and no update has told of yet: what the listing says.
func (s *Subscription) listedState(id string) (*subState, bool) {
	if s.settled == nil || !s.opt.Listing {
		return nil, false
	}
	i, ok := s.settled.Listed(id)
	if !ok {
		return nil, false
	}
	b := s.settled.Listing().Brief(i)
	return &subState{status: b.Status, turns: b.Turn, ended: b.Turn, stamp: b.UpdatedAt,
		inbox: map[string]record.InboxState{}}, true
}

// watchUnsettled watches the dir of a session that is not settled (or
// whose record cannot be read), for every session.
func (s *Subscription) watchUnsettled(id string) {
	if s.settled != nil {
		s.settled.Drop(id)
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
	gen, ok := s.m.Store().PeekGeneration()
	if !ok || s.genOK && gen == s.gen {
		return nil
	}
	s.gen, s.genOK = gen, true
	return s.settled.Changed(s.m.Store().SessionsDir())
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

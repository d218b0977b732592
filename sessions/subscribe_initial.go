package sessions

import (
	"context"
	"errors"
)

// What a subscription reports first, and what it looks at again when it
// may have missed events.

// initial is the first update of every session: for a subscription to
// every session without events, the listing's summaries (no turns, no
// inbox: as fast as `zwarm ls`); otherwise each record read whole. A
// subscription to every session with events reads whole only the sessions
// its filter keeps, chosen from the summaries: watching the running
// workers of a state dir of thousands costs what they cost.
func (s *Subscription) initial(ctx context.Context) ([]Update, error) {
	var out []Update
	if s.ids == nil {
		list, bad, err := s.m.scan(s.opt.Filter.Match)
		if err != nil {
			return nil, err
		}
		if s.opt.Events {
			rc := &readCtx{m: s.m}
			for _, cur := range list {
				if u, ok := s.build(ctx, cur.ID, rc); ok {
					out = append(out, u)
				}
			}
			list = nil
		}
		for _, cur := range list {
			st := &subState{status: cur.Status, turns: cur.Turn, stamp: cur.UpdatedAt, inbox: map[string]InboxState{}}
			if cur.Settled() {
				st.ended = cur.Turn
			}
			s.known[cur.ID] = st
			s.watchOwner(cur.ID, st, cur)
			out = append(out, Update{ID: cur.ID, Session: cur, Initial: true})
		}
		for _, re := range bad {
			if errors.Is(re, errNoRecord) {
				continue // no session to watch (build says why)
			}
			s.known[re.ID] = &subState{errMsg: re.Error(), inbox: map[string]InboxState{}}
			out = append(out, Update{ID: re.ID, Initial: true, Err: re})
		}
		return out, nil
	}
	ids, err := s.initialIDs()
	if err != nil {
		return nil, err
	}
	rc := &readCtx{m: s.m, ids: ids}
	for _, id := range ids {
		if u, ok := s.build(ctx, id, rc); ok {
			out = append(out, u)
		}
	}
	return out, nil
}

// dirty is the sessions to look at again: those that changed, or after
// missed events, every session known or present.
func (s *Subscription) dirty() []string {
	ids := s.src.take()
	if !s.src.takeResync() {
		return ids
	}
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	all, _ := s.initialIDs()
	for id := range s.known {
		all = append(all, id)
	}
	for _, id := range all {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

func (s *Subscription) initialIDs() ([]string, error) {
	if s.ids != nil {
		out := make([]string, 0, len(s.ids))
		for id := range s.ids {
			out = append(out, id)
		}
		return out, nil
	}
	return s.m.st.ids()
}

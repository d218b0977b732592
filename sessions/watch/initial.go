package watch

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
)

// What a subscription reports first, and what it looks at again when it
// may have missed events.

// initial is the first update of every session. A subscription to every
// session starts from a listing (listing_open.go): the settled sessions
// the cache holds as they are, and the others, read whole. With Listing,
// the listing is delivered as it is; without, each settled session its
// filter keeps is an update of its own, its summary (no turns, no inbox:
// as fast as `zwarm ls`), or its record whole with Events: watching the
// running workers of a state dir of thousands costs what they cost.
func (s *Subscription) initial(ctx context.Context) ([]Update, error) {
	var out []Update
	if s.ids == nil {
		start, err := s.m.Listings().OpenListing(false)
		if err != nil {
			return nil, err
		}
		s.check = !start.Checked
		s.settled = listing.NewSettledSet(start.Listing)
		s.gen, s.genOK = start.Listing.Generation()
		if s.opt.Listing {
			out = append(out, Update{Initial: true, Listing: start.Listing, Pending: len(start.Rest)})
		} else if err := s.initialListed(ctx, start.Listing, &out); err != nil {
			return nil, err
		}
		current := s.m.Judge(start.Rest)
		for _, id := range start.Rest {
			if u, ok := s.build(ctx, id, current); ok {
				out = append(out, u)
			}
		}
		if !s.opt.Listing {
			// Newest first, as a listing is; records that cannot be read
			// last.
			slices.SortStableFunc(out, func(a, b Update) int {
				switch {
				case a.Session == nil || b.Session == nil:
					return cmp.Compare(listing.B2i(a.Session == nil), listing.B2i(b.Session == nil))
				}
				return cmp.Or(b.Session.CreatedAt.Compare(a.Session.CreatedAt), strings.Compare(a.ID, b.ID))
			})
		}
		return out, nil
	}
	ids, err := s.initialIDs()
	if err != nil {
		return nil, err
	}
	current := s.m.Judge(ids)
	for _, id := range ids {
		if u, ok := s.build(ctx, id, current); ok {
			out = append(out, u)
		}
	}
	return out, nil
}

// initialListed adds an update for each settled session of the listing
// that the filter keeps.
func (s *Subscription) initialListed(ctx context.Context, l *listing.Listing, out *[]Update) error {
	if s.opt.Filter.OnlyUnsettled() {
		return nil // no settled session can match
	}
	var keep []int
	err := l.Each(ctx, func(i int, sum *record.Session) bool {
		if s.opt.Filter.Match(sum) {
			keep = append(keep, i)
		}
		return true
	})
	if err != nil {
		return err
	}
	current := s.m.Judge(nil)
	for len(keep) > 0 {
		batch := keep[:min(listing.LoadBatch, len(keep))]
		keep = keep[len(batch):]
		list, err := l.Sessions(ctx, batch)
		if err != nil {
			return err
		}
		for _, cur := range list {
			if s.opt.Events {
				if u, ok := s.build(ctx, cur.ID, current); ok {
					*out = append(*out, u)
				}
				continue
			}
			st := &subState{status: cur.Status(), turns: cur.Turn, ended: cur.Turn, stamp: cur.UpdatedAt, inbox: map[string]record.InboxState{}}
			s.known[cur.ID] = st
			s.watchOwner(cur.ID, st, cur)
			*out = append(*out, Update{ID: cur.ID, Session: cur, Initial: true})
		}
	}
	return nil
}

// dirty is the sessions to look at again: those that changed, or after
// missed events, every session known or present (of every session, the
// settled ones whose records changed: resync).
func (s *Subscription) dirty() []string {
	ids := s.src.take()
	if !s.src.takeResync() {
		return ids
	}
	if s.settled != nil {
		return appendNew(ids, s.resync())
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
	return s.m.Store().Ids()
}

// resync is what a subscription to every session looks at after missed
// events: the sessions it knows, the settled ones whose records changed or
// went, and the sessions it does not know of.
func (s *Subscription) resync() []string {
	var out []string
	for id := range s.known {
		out = append(out, id)
	}
	out = appendNew(out, s.settled.Changed(s.m.Store().SessionsDir()))
	present, _ := s.m.Store().Ids()
	var unknown []string
	for _, id := range present {
		if _, ok := s.known[id]; !ok && !s.settled.Has(id) {
			unknown = append(unknown, id)
		}
	}
	return appendNew(out, unknown)
}

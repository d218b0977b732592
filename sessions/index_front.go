package sessions

import (
	"errors"
	"fmt"
	"os"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"golang.org/x/sys/unix"
)

// listFront answers a listing from the front of the listing cache, when
// the cache says everything as it is: its generation is the current one
// and the sessions dir has not changed since it was read (index.go). The
// cache is then read newest first only as far as the listing shows
// (--limit), settled sessions are skipped when the filter wants only
// unsettled ones, and only the records shown are checked against their
// files, one stat each: `ls -L 20` of 100,000 sessions costs what it
// costs of 1,000. ok is false when the cache cannot answer alone (none,
// not current, a shown record changed behind zwarm's back, a session
// settled since the cache was written): the caller makes the full
// listing, which brings the cache up to date.
func (m *Manager) listFront(opt ListOptions) (out []*record.Session, bad []*state.RecordError, ok bool) {
	dir, err := os.Open(m.st.SessionsDir())
	if err != nil {
		return nil, nil, false
	}
	defer dir.Close()
	fd := int(dir.Fd())
	var dst unix.Stat_t
	if unix.Fstat(fd, &dst) != nil {
		return nil, nil, false
	}
	gen, unlock, genOK := m.st.Generation()
	defer unlock()
	if !genOK {
		return nil, nil, false
	}
	r := openIndex(m.st)
	if r == nil {
		return nil, nil, false
	}
	defer r.Close()
	if r.Gen != gen || !r.Unchanged(dst.Mtim.Nano(), dst.Ctim.Nano(), int64(racyWindow)) {
		return nil, nil, false
	}

	// The sessions that were not settled: read whole, as a full listing
	// reads them.
	rc := &readCtx{m: m, ids: r.Unsettled}
	for k, l := range loadAll(m.st, fd, r.Unsettled) {
		s, re := m.listed(r.Unsettled[k], l, rc)
		switch {
		case re != nil:
			bad = append(bad, re)
		case s == nil:
		case s.Settled() && !s.Legacy:
			return nil, nil, false // the cache is behind: the full listing catches it up
		case opt.Match(s):
			out = append(out, s)
		}
	}

	// The settled ones, newest first, as far as the listing goes: once
	// limit of them match, none after them can be shown.
	if !opt.onlyUnsettled() {
		slab := newSlab(min(r.Count, max(opt.Limit, slabBlock)))
		d := &decoder{}
		var kept []fileCheck
		var sum summary
		for e, more := r.Next(); more; e, more = r.Next() {
			if !d.summary(e, &sum) {
				return nil, nil, false
			}
			mark := slab.mark()
			s := slab.session(&sum)
			if !opt.Match(s) {
				slab.undo(mark)
				continue
			}
			kept = append(kept, fileCheck{sum.ID, sum.Key})
			out = append(out, s)
			if opt.Limit > 0 && len(kept) >= opt.Limit {
				break
			}
		}
		if r.Err() != nil {
			return nil, nil, false
		}
		for _, same := range sameFiles(fd, kept) {
			if !same {
				return nil, nil, false // changed behind zwarm's back: read again
			}
		}
	}
	SortNewestFirst(out) // the settled ones are in order already: this is cheap
	return out, bad, true
}

// onlyUnsettled says no settled session can match: the cache's settled
// summaries need not be read.
func (o ListOptions) onlyUnsettled() bool {
	return o.Active || o.Status == record.StatusPending || o.Status == record.StatusRunning || o.Status == record.StatusAttached
}

// listed is what a listing makes of one record it read (the session to
// list, why it cannot be read, or neither: a session being created or
// removed).
func (m *Manager) listed(id string, l loaded, rc *readCtx) (*record.Session, *state.RecordError) {
	if l.statErr != nil {
		switch {
		case !errors.Is(l.statErr, unix.ENOENT):
			return nil, &state.RecordError{ID: id, Err: fmt.Errorf("%s: %w", m.st.MetaPath(id), l.statErr)}
		case m.st.RecordMissing(id):
			return nil, m.st.NoRecordError(id)
		}
		return nil, nil
	}
	if errors.Is(l.err, ErrNotFound) {
		return nil, nil
	}
	if l.err != nil {
		re := &state.RecordError{ID: id, Err: l.err}
		errors.As(l.err, &re)
		return nil, re
	}
	s := m.current(l.s, rc)
	// Settled sessions are listed without their turns; the few that run
	// keep them: their current turn is what a listing shows.
	if s.Settled() {
		s = summaryOf(s)
	}
	return s, nil
}

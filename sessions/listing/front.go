package listing

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// Front answers a listing from the front of the listing cache, when
// the cache says everything as it is: its generation is the current one
// and the sessions dir has not changed since it was read (cache.go). The
// cache is then read newest first only as far as the listing shows
// (--limit), settled sessions are skipped when the filter wants only
// unsettled ones, and only the records shown are checked against their
// files, one stat each: `ls -L 20` of 100,000 sessions costs what it
// costs of 1,000. ok is false when the cache cannot answer alone (none,
// not current, a shown record changed behind zwarm's back, a session
// settled since the cache was written): the caller makes the full
// listing, which brings the cache up to date.
func (c *Cache) Front(opt Options) (out []*record.Session, bad []*state.RecordError, ok bool) {
	dir, err := os.Open(c.st.SessionsDir())
	if err != nil {
		return nil, nil, false
	}
	defer dir.Close()
	fd := int(dir.Fd())
	var dst unix.Stat_t
	if unix.Fstat(fd, &dst) != nil {
		return nil, nil, false
	}
	gen, unlock, genOK := c.st.Generation()
	defer unlock()
	if !genOK {
		return nil, nil, false
	}
	r := OpenIndex(c.st)
	if r == nil {
		return nil, nil, false
	}
	defer r.Close()
	if r.Gen != gen || !r.Unchanged(dst.Mtim.Nano(), dst.Ctim.Nano(), int64(RacyWindow)) {
		return nil, nil, false
	}

	// The sessions that were not settled: read whole, as a full listing
	// reads them.
	current := c.judge(r.Unsettled)
	for k, l := range LoadAll(c.st, fd, r.Unsettled) {
		s, re := c.listed(r.Unsettled[k], l, current)
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
	if !opt.OnlyUnsettled() {
		slab := newSlab(min(r.Count, max(opt.Limit, slabBlock)))
		d := &decoder{}
		var kept []FileCheck
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
			kept = append(kept, FileCheck{sum.ID, sum.Key})
			out = append(out, s)
			if opt.Limit > 0 && len(kept) >= opt.Limit {
				break
			}
		}
		if r.Err() != nil {
			return nil, nil, false
		}
		for _, same := range SameFiles(fd, kept) {
			if !same {
				return nil, nil, false // changed behind zwarm's back: read again
			}
		}
	}
	record.SortNewestFirst(out) // the settled ones are in order already: this is cheap
	return out, bad, true
}

// OnlyUnsettled says no settled session can match: the cache's settled
// summaries need not be read.
func (o Options) OnlyUnsettled() bool {
	return o.Active || o.Status == record.StatusPending || o.Status == record.StatusRunning || o.Status == record.StatusAttached
}

// listed is what a listing makes of one record it read (the session to
// list, why it cannot be read, or neither: a session being created or
// removed).
func (c *Cache) listed(id string, l loaded, current func(*record.Session) *record.Session) (*record.Session, *state.RecordError) {
	if l.statErr != nil {
		switch {
		case !errors.Is(l.statErr, unix.ENOENT):
			return nil, &state.RecordError{ID: id, Err: fmt.Errorf("%s: %w", c.st.MetaPath(id), l.statErr)}
		case c.st.RecordMissing(id):
			return nil, c.st.NoRecordError(id)
		}
		return nil, nil
	}
	if errors.Is(l.err, store.ErrNotFound) {
		return nil, nil
	}
	if l.err != nil {
		re := &state.RecordError{ID: id, Err: l.err}
		errors.As(l.err, &re)
		return nil, re
	}
	s := current(l.s)
	// Settled sessions are listed without their turns; the few that run
	// keep them: their current turn is what a listing shows.
	if s.Settled() {
		s = SummaryOf(s)
	}
	return s, nil
}

// Options filters a listing. Zero values match everything.
type Options struct {
	Status  record.Status
	Source  record.Source
	Adapter string
	Model   string
	// Text matches the id, task, model, adapter or source, ignoring case.
	Text string
	// Limit keeps only the newest so many (0: all).
	Limit int
	// Active keeps only sessions that are not settled.
	Active bool
	// After, when set, keeps only the sessions that come after it newest
	// first: the next page of a listing that showed it last. Unlike an
	// offset, it holds as sessions are made and removed meanwhile.
	After *Cursor
}

// Cursor is a place in the newest-first order: a session's creation
// time and id.
type Cursor struct {
	CreatedAt time.Time
	ID        string
}

// CursorOf is the place of s.
func CursorOf(s *record.Session) *Cursor { return &Cursor{CreatedAt: s.CreatedAt, ID: s.ID} }

// String is the cursor as a query parameter takes it: its time
// (RFC 3339, to the nanosecond), a comma, its id.
func (c *Cursor) String() string { return c.CreatedAt.UTC().Format(time.RFC3339Nano) + "," + c.ID }

// ParseCursor reads a cursor's String.
func ParseCursor(s string) (*Cursor, error) {
	at, id, ok := strings.Cut(s, ",")
	t, err := time.Parse(time.RFC3339Nano, at)
	if !ok || err != nil || id == "" {
		return nil, fmt.Errorf("%q is no cursor: want the time and id of a session (RFC 3339 time, a comma, the id), as a listing's next gives it", s)
	}
	return &Cursor{CreatedAt: t, ID: id}, nil
}

// before reports whether s comes before c, or is c, newest first (the
// order of record.SortNewestFirst).
func (c *Cursor) before(s *record.Session) bool {
	return cmp.Or(s.CreatedAt.Compare(c.CreatedAt), strings.Compare(c.ID, s.ID)) >= 0
}

// Match reports whether s passes the filter.
func (o Options) Match(s *record.Session) bool {
	switch {
	case o.After != nil && o.After.before(s),
		o.Active && s.Settled(),
		o.Status != "" && s.Status() != o.Status,
		!s.Source.Matches(o.Source),
		o.Adapter != "" && s.Adapter != o.Adapter,
		o.Model != "" && !strings.EqualFold(s.Model, o.Model):
		return false
	}
	if o.Text == "" {
		return true
	}
	q := strings.ToLower(o.Text)
	for _, f := range []string{s.ID, s.Task, s.Model, s.Adapter, s.Source.String(), string(s.Status())} {
		if strings.Contains(strings.ToLower(f), q) {
			return true
		}
	}
	return false
}

// Error reports the records a listing could not read; the listing
// holds every other session.
type Error struct{ Records []*state.RecordError }

func (e *Error) Error() string {
	msgs := make([]string, len(e.Records))
	for i, r := range e.Records {
		msgs[i] = r.Error()
	}
	return fmt.Sprintf("%d session record(s) could not be read: %s", len(e.Records), strings.Join(msgs, "; "))
}

// List is every session that matches, newest first: settled ones as a
// summary, the record without its turns; unsettled ones whole, brought up
// to date by the cache's Judge. Settled sessions cost a stat of their
// meta.json when the cache has them and they are listed (with a limit,
// the cache is read only as far as it shows), one read otherwise. Records
// that cannot be read are reported in an *Error beside the sessions that
// could.
func (c *Cache) List(opt Options) ([]*record.Session, error) {
	out, bad, ok := c.Front(opt)
	if !ok {
		var err error
		if out, bad, err = c.Scan(opt.Match); err != nil {
			return nil, err
		}
	}
	if opt.Limit > 0 && len(out) > opt.Limit {
		out = out[:opt.Limit]
	}
	if len(bad) > 0 {
		return out, &Error{Records: bad}
	}
	return out, nil
}

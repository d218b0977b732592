package listing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/zwarm/zwarm/sessions/index"
	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/record"
)

// Listing is the settled sessions of a state dir as a subscription found
// them (SubscribeOptions.Listing): the listing cache's summaries, each
// checked against its record's file, newest first. It keeps a Brief of
// each in memory, about a hundred bytes, and reads a summary whole from
// the cache only when asked (Sessions, Each), so that a front end can
// count, order and scroll through 100,000 sessions for the memory of a
// screenful. It never changes once made, and may be read from any
// goroutine; the subscription that made it closes it when it ends.
type Listing struct {
	r      *index.Reader // nil: no entries
	at     []int64       // where each entry starts in the cache
	keys   []index.Key   // the identity of the meta.json it was made from
	briefs []brief
	byID   []int32 // the entries in id order
	// gen is sessions.gen when the listing was made (genOK: it could be
	// read): a change of a settled record after it advances it.
	gen   uint64
	genOK bool
	// refs counts the subscriptions that read it: the last Close closes
	// the cache file.
	refs atomic.Int32
}

// Brief is what a Listing holds of a settled session in memory.
type Brief struct {
	ID      string
	Status  record.Status
	Adapter string
	Model   string
	Source  record.Source
	// Created and Updated are the record's; Ended is zero if it has no
	// end time.
	CreatedAt, UpdatedAt, EndedAt time.Time
	Turn                          int
	// Tokens is Usage.TotalTokens; CostUSD counts only when Priced
	// (Session.CostUSD is not nil).
	Tokens  int64
	CostUSD float64
	Priced  bool
}

// Record is a record made of the brief, for showing the session until its
// summary is read: it has no task, messages or changes.
func (b Brief) Record() *record.Session {
	s := &record.Session{Version: record.SchemaVersion, ID: b.ID, Adapter: b.Adapter, Model: b.Model,
		Source: b.Source, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt, Turn: b.Turn, Usage: record.Usage{TotalTokens: b.Tokens}}
	statusfield.Set(s, b.Status)
	if !b.EndedAt.IsZero() {
		end := b.EndedAt
		s.EndedAt = &end
	}
	if b.Priced {
		cost := b.CostUSD
		s.CostUSD = &cost
	}
	return s
}

// Len is how many sessions the listing holds.
func (l *Listing) Len() int {
	if l == nil {
		return 0
	}
	return len(l.briefs)
}

// Brief is what the listing holds of its i-th session (newest first).
func (l *Listing) Brief(i int) Brief {
	b := &l.briefs[i]
	src, _ := record.ParseSource(b.source)
	out := Brief{ID: b.id, Status: b.status, Adapter: b.adapter, Model: b.model, Source: src,
		CreatedAt: time.Unix(0, b.created).UTC(), UpdatedAt: time.Unix(0, b.updated).UTC(),
		Turn: int(b.turn), Tokens: b.tokens, CostUSD: b.cost, Priced: b.priced}
	if b.ended != 0 {
		out.EndedAt = time.Unix(0, b.ended).UTC()
	}
	return out
}

// Generation is sessions.gen when the listing was made; ok is false when
// it could not be read.
func (l *Listing) Generation() (gen uint64, ok bool) { return l.gen, l.genOK }

// ID is the id of the listing's i-th session.
func (l *Listing) ID(i int) string { return l.briefs[i].id }

// Find is where the session id is in the listing.
func (l *Listing) Find(id string) (int, bool) {
	if l == nil {
		return 0, false
	}
	k, ok := slices.BinarySearchFunc(l.byID, id, func(i int32, id string) int { return strings.Compare(l.briefs[i].id, id) })
	if !ok {
		return 0, false
	}
	return int(l.byID[k]), true
}

// Sessions reads the summaries (records without their turns, as List gives
// them) of the listing's sessions at the positions given, from the cache.
func (l *Listing) Sessions(ctx context.Context, at []int) ([]*record.Session, error) {
	out := make([]*record.Session, len(at))
	d := &decoder{}
	slab := newSlab(len(at))
	for k, i := range at {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if i < 0 || i >= l.Len() {
			return nil, errors.New("read the listing: no such position")
		}
		e, err := l.r.EntryAt(l.at[i])
		if err != nil {
			return nil, listingErr(err)
		}
		var sum summary
		if !d.summary(e, &sum) {
			return nil, listingErr(errBadIndex)
		}
		out[k] = slab.session(&sum)
	}
	return out, nil
}

// Each hands the summary of every session of the listing to fn, newest
// first, with its position, reading the cache once through in bounded
// memory: the session and what it holds are valid only during the call.
// It stops early when fn returns false.
func (l *Listing) Each(ctx context.Context, fn func(i int, s *record.Session) bool) error {
	if l.Len() == 0 {
		return nil
	}
	d := &decoder{}
	var sum summary
	// One record, made again for each session.
	sl := newSlab(1)
	empty := sl.mark()
	i := 0
	var err error
	werr := l.r.Walk(func(at int64, e index.Entry) bool {
		// Entries that changed or went since the cache was written are
		// not the listing's.
		for i < len(l.at) && l.at[i] < at {
			i++
		}
		if i == len(l.at) {
			return false
		}
		if l.at[i] != at {
			return true
		}
		if err = ctx.Err(); err != nil {
			return false
		}
		if !d.summary(e, &sum) {
			err = listingErr(errBadIndex)
			return false
		}
		sl.undo(empty)
		s := sl.session(&sum)
		d.workspaces, d.stats, d.landings = d.workspaces[:0], d.stats[:0], d.landings[:0]
		i++
		return fn(i-1, s)
	})
	if werr != nil {
		return listingErr(werr)
	}
	return err
}

// Close releases the cache file the listing reads, once every
// subscription that shares it has. Reading it after is an error.
func (l *Listing) Close() {
	if l != nil && l.r != nil && l.refs.Add(-1) == 0 {
		l.r.Close()
	}
}

// acquire takes one more reference to the listing, unless it was closed.
func (l *Listing) acquire() bool {
	for {
		n := l.refs.Load()
		if n <= 0 {
			return false
		}
		if l.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func listingErr(err error) error {
	return fmt.Errorf("read the listing cache (%s): %w", IndexFile, err)
}

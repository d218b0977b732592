package listing

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/index"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// The listing cache, sessions.index beside the sessions dir (its format is
// package sessions/index's), keeps the summary of every settled session
// (its record without the turns) with the identity of the meta.json it
// came from (size, modification and change time, inode), newest first;
// the ids of the other sessions; a sorted table of every id; and the
// sessions dir's modification and change times when it was last read. It
// is never the source of truth: a missing, corrupt or foreign cache is
// rebuilt from the records. Unsettled sessions are never cached: their
// records move.
//
// Sessions are created and removed by renaming their directories in and
// out of the sessions dir, which changes its times: while they are the
// recorded ones, and the modification time old enough that a change
// within the same clock tick of a coarse file system cannot hide behind
// it, the set of sessions is the recorded one and the directory is not
// read. A state dir copied elsewhere has other times (and inodes): its
// cache is rebuilt.
//
// A settled record changes only when a follow-up reopens it (Inject). That
// writer bumps sessions.gen, under an exclusive lock on it, before it
// rewrites the record. A listing reads .gen under a shared lock (under
// lease locks, which have none, it reads it twice around a look that no
// writer holds it: store.Generation): while the
// generation is the one the cache was built at, no settled record has
// changed through zwarm; otherwise the cache is rebuilt. A crash at any
// instant leaves the generation bumped or the record unchanged, never a
// changed record under an old generation. Either way every cached record
// a listing shows is checked against its meta.json's identity, one stat
// each: a record changed behind zwarm's back (edited, restored,
// corrupted) is read again, and listed as broken if it is, as it is
// without the cache. A listing that shows few (a limit, a filter) reads
// the cache from the front, only as far as it shows, and stats only those
// (index_front.go); a full listing stats every record (a listing of
// 100,000 sessions reads one directory's times, one file and stats
// 100,000). Sessions created or removed are seen in the sessions directory
// itself. Writers pay one locked counter update per follow-up to a settled
// session; the cache file is written by full listings, and only when it
// changed.

const (
	IndexFile = "sessions.index"
	// racyWindow is how recent a directory's modification time may be and
	// still be trusted to say nothing changed: file systems with a coarse
	// clock give two changes within a tick the same time.
	RacyWindow = 2 * time.Second
)

// summary is a settled record as the cache keeps it: flat, so decoding
// thousands costs little.
type summary struct {
	Key                                                            index.Key
	ID, Task, Status, Adapter, Model, Sandbox, WorkingDir, Source  string
	ThreadID, LastMessage, Error                                   string
	CreatedAt, UpdatedAt, EndedAt, LastEventAt                     int64
	PID, Turn, PendingInjects, NextInboxSeq, ExitCode              int
	HasExit, HasCost                                               bool
	Cost                                                           float64
	InputTokens, CachedInputTokens, CacheWriteTokens, OutputTokens int64
	ReasoningTokens, TotalTokens                                   int64
	Denied                                                         int
	// Workspace is the record's, whole: listings show what became of the
	// worker's change.
	Workspace *record.Workspace
	// JobRunner and JobID are the record's job, if a runner other than
	// this host's ran it: listings say where it ran.
	JobRunner, JobID string
	// Role, ReasoningEffort, Instructions and MaxCostUSD are the settings
	// it was started with, which listings print (--json).
	Role, ReasoningEffort, Instructions string
	MaxCostUSD                          float64
}

// sessionIndex is the cache's content as a full listing reads and writes
// it. Settled summaries are kept newest first, the order listings print
// them in.
type sessionIndex struct {
	Gen       uint64
	DirMtime  int64 // the sessions dir's modification time when it was read
	DirCtime  int64 // and its change time
	Checked   int64 // when that was
	Settled   []summary
	Unsettled []string
}

func IndexPath(st *state.Store) string { return filepath.Join(st.Dir(), IndexFile) }

// OpenIndex opens the cache for reading from the front; nil if there is
// none that can be read.
func OpenIndex(st *state.Store) *index.Reader {
	r, err := index.Open(IndexPath(st))
	if err != nil {
		return nil
	}
	return r
}

// loadIndex reads the whole cache; anything wrong with it is an empty
// cache.
func loadIndex(st *state.Store) *sessionIndex {
	r := OpenIndex(st)
	if r == nil {
		return &sessionIndex{}
	}
	defer r.Close()
	ix := &sessionIndex{Gen: r.Gen, DirMtime: r.DirMtime, DirCtime: r.DirCtime, Checked: r.Checked, Unsettled: r.Unsettled,
		Settled: make([]summary, 0, r.Count)}
	d := &decoder{}
	for e, ok := r.Next(); ok; e, ok = r.Next() {
		ix.Settled = append(ix.Settled, summary{})
		if !d.summary(e, &ix.Settled[len(ix.Settled)-1]) {
			return &sessionIndex{}
		}
	}
	if r.Err() != nil {
		return &sessionIndex{}
	}
	return ix
}

// saveIndex replaces the cache, best effort: a read-only state dir goes
// without.
func saveIndex(st *state.Store, ix *sessionIndex) {
	out := &index.Index{Gen: ix.Gen, DirMtime: ix.DirMtime, DirCtime: ix.DirCtime, Checked: ix.Checked, Unsettled: ix.Unsettled,
		Entries: make([]index.Entry, len(ix.Settled))}
	e := &encoder{}
	for i := range ix.Settled {
		out.Entries[i] = e.entry(&ix.Settled[i])
	}
	data, err := out.Encode()
	if err != nil {
		return // a name no session has: the next listing reads the records
	}
	dropStaleIndexTemps(st)
	st.WriteFileAtomic(IndexPath(st), data)
}

// staleTemp is how old a temporary cache file must be to be taken for one
// a killed listing left (as big as the cache: 56 MB for 100,000 sessions).
// A younger one may be another listing's, being written; were it removed,
// that listing would only fail to save.
var staleTemp = time.Minute

// dropStaleIndexTemps removes what listings killed while writing the
// cache left behind.
func dropStaleIndexTemps(st *state.Store) {
	tmps, _ := filepath.Glob(filepath.Join(st.Dir(), "."+IndexFile+".tmp*"))
	for _, p := range tmps {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) >= staleTemp {
			os.Remove(p)
		}
	}
}

// Scan is one pass over every session for a listing: the cached summary of
// each settled session, the current record of every other one, newest
// first. Records that cannot be read are returned beside. With keep nil it
// only brings the cache up to date, and lists nothing.
func (c *Cache) Scan(keep func(*record.Session) bool) ([]*record.Session, []*state.RecordError, error) {
	dir, err := os.Open(c.st.SessionsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list sessions: %w", err)
	}
	defer dir.Close()
	var dst unix.Stat_t
	if err := unix.Fstat(int(dir.Fd()), &dst); err != nil {
		return nil, nil, fmt.Errorf("list sessions: %w", err)
	}
	gen, unlock, genOK := c.st.Generation()
	defer unlock()
	p := &pass{c: c, keep: keep, fd: int(dir.Fd()), ix: loadIndex(c.st)}
	trusted := genOK && p.ix.Gen == gen
	p.next = &sessionIndex{Gen: gen, DirMtime: p.ix.DirMtime, DirCtime: p.ix.DirCtime, Checked: p.ix.Checked}
	p.changed = !trusted
	if err := p.readDirIfChanged(dir, &dst); err != nil {
		return nil, nil, err
	}
	p.out = make([]*record.Session, 0, len(p.ix.Settled)+len(p.ix.Unsettled))
	stale := p.keepCached(trusted)
	p.readRecords(p.rest(stale))
	if genOK && (p.changed || len(p.next.Unsettled) != len(p.ix.Unsettled)) {
		saveIndex(c.st, p.next) // it sorts them
	}
	record.SortNewestFirst(p.out) // the cached ones are in order already: this is cheap
	return p.out, p.bad, nil
}

// A pass is one Scan: the cache as it was read (ix), the cache it makes
// (next), and what it lists.
type pass struct {
	c    *Cache
	keep func(*record.Session) bool
	fd   int // the sessions dir
	ix   *sessionIndex
	next *sessionIndex
	// present is the sessions the directory holds, when it was read
	// (nil: the cache's set stands); seen those of them the cache had.
	present, seen map[string]bool
	changed       bool
	out           []*record.Session
	bad           []*state.RecordError
}

// readDirIfChanged reads which sessions there are: the recorded set while
// the directory has not changed since it was read, else what it holds now.
func (p *pass) readDirIfChanged(dir *os.File, dst *unix.Stat_t) error {
	mtime, ctime := dst.Mtim.Nano(), dst.Ctim.Nano()
	if mtime == p.ix.DirMtime && ctime == p.ix.DirCtime && p.ix.Checked-mtime >= int64(RacyWindow) {
		return nil
	}
	present, err := sessionNames(dir)
	if err != nil {
		return err
	}
	p.present = present
	p.next.DirMtime, p.next.DirCtime, p.next.Checked, p.changed = mtime, ctime, time.Now().UnixNano(), true
	return nil
}

// keepCached keeps the cached summaries whose records are the files they
// were read from, one stat each, and lists those keep wants; it returns
// the ids of those that changed or went since, to be read again.
func (p *pass) keepCached(trusted bool) (stale []string) {
	ix := p.ix
	// The common case, nothing changed, must cost next to nothing per
	// session: the records are made in one allocation.
	var slab *slab
	if p.keep != nil {
		slab = newSlab(len(ix.Settled))
	}
	if p.present != nil || !trusted {
		p.seen = make(map[string]bool, len(ix.Settled))
		p.next.Settled = make([]summary, 0, len(ix.Settled))
	} else {
		// Nothing to look for among the rest: ix is this call's own copy,
		// so the kept summaries are filtered into it in place.
		p.next.Settled = ix.Settled[:0]
	}
	checks := make([]FileCheck, len(ix.Settled))
	for i := range ix.Settled {
		checks[i] = FileCheck{ix.Settled[i].ID, ix.Settled[i].Key}
	}
	same := SameFiles(p.fd, checks)
	for i := range ix.Settled {
		e := &ix.Settled[i]
		if p.present != nil && !p.present[e.ID] {
			p.changed = true // removed
			continue
		}
		if !same[i] {
			// Changed or gone since it was cached: read below, as if new,
			// so a record broken behind zwarm's back is reported as broken.
			stale = append(stale, e.ID)
			p.changed = true
			continue
		}
		if p.seen != nil {
			p.seen[e.ID] = true
		}
		p.next.Settled = append(p.next.Settled, *e)
		if p.keep == nil {
			continue
		}
		if s := slab.session(e); p.keep(s) {
			p.out = append(p.out, s)
		}
	}
	return stale
}

// rest is the sessions whose records are read whole: the cache's
// unsettled ones and the stale, or, when the set of sessions was read,
// every one the cache did not keep.
func (p *pass) rest(stale []string) []string {
	ix := p.ix
	if p.seen == nil {
		if len(stale) > 0 {
			return append(slices.Clip(ix.Unsettled), stale...)
		}
		return ix.Unsettled
	}
	present := p.present
	if present == nil {
		present = map[string]bool{}
		for i := range ix.Settled {
			present[ix.Settled[i].ID] = true
		}
		for _, id := range ix.Unsettled {
			present[id] = true
		}
	}
	var rest []string
	for id := range present {
		if !p.seen[id] {
			rest = append(rest, id)
		}
	}
	return rest
}

// readRecords reads the records of rest whole, in batches read in
// parallel, brings each up to date, caches the settled ones and lists
// those keep wants.
func (p *pass) readRecords(rest []string) {
	current := p.c.judge(rest)
	for len(rest) > 0 {
		batch := rest[:min(LoadBatch, len(rest))]
		rest = rest[len(batch):]
		for k, l := range LoadAll(p.c.st, p.fd, batch) {
			if s := p.readOne(batch[k], l, current); s != nil && p.keep != nil && p.keep(s) {
				p.out = append(p.out, s)
			}
		}
	}
}

// readOne is what the pass makes of one record it read: the session to
// list, or nil (it cannot be read, or is being created or removed).
func (p *pass) readOne(id string, l loaded, current func(*record.Session) *record.Session) *record.Session {
	st := p.c.st
	if l.statErr != nil {
		if !errors.Is(l.statErr, unix.ENOENT) {
			p.bad = append(p.bad, &state.RecordError{ID: id, Err: fmt.Errorf("%s: %w", st.MetaPath(id), l.statErr)})
		} else if st.RecordMissing(id) {
			p.bad = append(p.bad, st.NoRecordError(id))
		}
		// A session being created (or removed): it is read once it has a
		// record.
		p.next.Unsettled = append(p.next.Unsettled, id)
		return nil
	}
	s, err := l.s, l.err
	if errors.Is(err, store.ErrNotFound) {
		p.next.Unsettled = append(p.next.Unsettled, id)
		return nil
	}
	if err != nil {
		re := &state.RecordError{ID: id, Err: err}
		errors.As(err, &re)
		p.bad = append(p.bad, re)
		p.next.Unsettled = append(p.next.Unsettled, id)
		return nil
	}
	s = current(s)
	// Python zwarm records are never cached: that zwarm may change them
	// without a word. A record that changed since the stat (a dead owner
	// just recorded) is cached on the next listing.
	if s.Settled() && !s.Legacy {
		p.next.Settled = append(p.next.Settled, Summarize(index.KeyOf(&l.st), s))
		p.changed = true
	} else {
		p.next.Unsettled = append(p.next.Unsettled, id)
	}
	// Settled sessions are listed without their turns; the few that run
	// keep them: their current turn is what a listing shows.
	if s.Settled() {
		s = SummaryOf(s)
	}
	return s
}

// Cache is the listing cache of a state dir and the listings made from
// it. Judge brings a record that is not settled up to date (a dead owner
// recorded, a running turn's progress folded in); it is given the ids a
// listing is about to read, once.
type Cache struct {
	st     *state.Store
	judge  Judge
	shared sharedListing
}

// Judge makes, for a listing about to read the records of ids, what
// brings each of them up to date.
type Judge func(ids []string) func(*record.Session) *record.Session

// NewCache is the listing cache of st.
func NewCache(st *state.Store, judge Judge) *Cache { return &Cache{st: st, judge: judge} }

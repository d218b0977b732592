package listing

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	ix := loadIndex(c.st)
	now := time.Now()
	trusted := genOK && ix.Gen == gen
	next := &sessionIndex{Gen: gen, DirMtime: ix.DirMtime, DirCtime: ix.DirCtime, Checked: ix.Checked}
	changed := !trusted

	// Which sessions there are: the recorded set while the directory has
	// not changed since it was read, else what it holds now.
	var present map[string]bool
	mtime, ctime := dst.Mtim.Nano(), dst.Ctim.Nano()
	if mtime != ix.DirMtime || ctime != ix.DirCtime || ix.Checked-mtime < int64(RacyWindow) {
		names, err := dir.Readdirnames(-1)
		if err != nil {
			return nil, nil, fmt.Errorf("list sessions: %w", err)
		}
		present = make(map[string]bool, len(names))
		for _, id := range names {
			if !strings.HasPrefix(id, ".") && store.ValidID(id) == nil {
				present[id] = true
			}
		}
		next.DirMtime, next.DirCtime, next.Checked, changed = mtime, ctime, now.UnixNano(), true
	}
	out := make([]*record.Session, 0, len(ix.Settled)+len(ix.Unsettled))
	var bad []*state.RecordError
	fd := int(dir.Fd())
	// The common case, nothing changed, must cost next to nothing per
	// session: the records are made in one allocation.
	var slab *slab
	if keep != nil {
		slab = newSlab(len(ix.Settled))
	}
	var seen map[string]bool
	if present != nil || !trusted {
		seen = make(map[string]bool, len(ix.Settled))
		next.Settled = make([]summary, 0, len(ix.Settled))
	} else {
		// Nothing to look for among the rest: ix is this call's own copy,
		// so the kept summaries are filtered into it in place.
		next.Settled = ix.Settled[:0]
	}
	checks := make([]FileCheck, len(ix.Settled))
	for i := range ix.Settled {
		checks[i] = FileCheck{ix.Settled[i].ID, ix.Settled[i].Key}
	}
	same := SameFiles(fd, checks)
	var stale []string
	for i := range ix.Settled {
		e := &ix.Settled[i]
		if present != nil && !present[e.ID] {
			changed = true // removed
			continue
		}
		if !same[i] {
			// Changed or gone since it was cached: read below, as if new,
			// so a record broken behind zwarm's back is reported as broken.
			stale = append(stale, e.ID)
			changed = true
			continue
		}
		if seen != nil {
			seen[e.ID] = true
		}
		next.Settled = append(next.Settled, *e)
		if keep == nil {
			continue
		}
		if s := slab.session(e); keep(s) {
			out = append(out, s)
		}
	}
	rest := ix.Unsettled
	if len(stale) > 0 && seen == nil {
		rest = append(slices.Clip(ix.Unsettled), stale...)
	}
	if seen != nil {
		rest = nil
		if present == nil {
			present = map[string]bool{}
			for i := range ix.Settled {
				present[ix.Settled[i].ID] = true
			}
			for _, id := range ix.Unsettled {
				present[id] = true
			}
		}
		for id := range present {
			if !seen[id] {
				rest = append(rest, id)
			}
		}
	}
	current := c.judge(rest)
	for len(rest) > 0 {
		batch := rest[:min(LoadBatch, len(rest))]
		rest = rest[len(batch):]
		for k, l := range LoadAll(c.st, fd, batch) {
			id := batch[k]
			if l.statErr != nil {
				if !errors.Is(l.statErr, unix.ENOENT) {
					bad = append(bad, &state.RecordError{ID: id, Err: fmt.Errorf("%s: %w", c.st.MetaPath(id), l.statErr)})
				} else if c.st.RecordMissing(id) {
					bad = append(bad, c.st.NoRecordError(id))
				}
				// A session being created (or removed): it is read once it
				// has a record.
				next.Unsettled = append(next.Unsettled, id)
				continue
			}
			s, err := l.s, l.err
			if errors.Is(err, store.ErrNotFound) {
				next.Unsettled = append(next.Unsettled, id)
				continue
			}
			if err != nil {
				re := &state.RecordError{ID: id, Err: err}
				errors.As(err, &re)
				bad = append(bad, re)
				next.Unsettled = append(next.Unsettled, id)
				continue
			}
			s = current(s)
			// Python zwarm records are never cached: that zwarm may change
			// them without a word. A record that changed since the stat (a
			// dead owner just recorded) is cached on the next listing.
			if s.Settled() && !s.Legacy {
				next.Settled = append(next.Settled, Summarize(index.KeyOf(&l.st), s))
				changed = true
			} else {
				next.Unsettled = append(next.Unsettled, id)
			}
			// Settled sessions are listed without their turns; the few that
			// run keep them: their current turn is what a listing shows.
			if s.Settled() {
				s = SummaryOf(s)
			}
			if keep != nil && keep(s) {
				out = append(out, s)
			}
		}
	}
	if genOK && (changed || len(next.Unsettled) != len(ix.Unsettled)) {
		saveIndex(c.st, next) // it sorts them
	}
	record.SortNewestFirst(out) // the cached ones are in order already: this is cheap
	return out, bad, nil
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

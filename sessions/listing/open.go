package listing

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/index"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/store"
)

// Start is what a subscription to every session starts from: the
// settled sessions the listing cache holds as they are, and the ids of the
// others, whose records are read whole (those that were not settled when
// the cache was written, changed since, or came since).
type Start struct {
	Listing *Listing
	Rest    []string
	// checked says every entry was checked against its record's file;
	// when not, the cache's generation was current (no settled record
	// changed through zwarm since it was written) and the subscription
	// checks them once it has delivered its first state.
	Checked bool
}

// rebuildShare is how many of the sessions may have to be read whole
// before the cache is brought up to date first: reading a few records
// costs less than rewriting the cache; reading most of them whole, and
// holding them, costs more.
const rebuildShare = 4

// OpenListing makes the listing a subscription starts from. It reads the
// cache once through, in bounded memory. While the cache's generation is
// the current one, its summaries are what zwarm last wrote; otherwise, or
// with check, every one is checked against its record's file, one stat
// each, as a full listing does (100,000 stats are most of what a listing
// of 100,000 costs). Without a cache, or when too many records would have
// to be read whole, a full listing brings the cache up to date first. A
// state dir without a sessions dir is empty.
func (c *Cache) OpenListing(check bool) (*Start, error) {
	return c.shared.open(c, check, func() (*Start, error) {
		ls, stale, err := c.readListing(false, check)
		if err != nil || !stale {
			return ls, err
		}
		ls.Listing.Close()
		// A listing of nothing: it writes the cache, and keeps no record.
		if _, _, err := c.Scan(nil); err != nil {
			return nil, err
		}
		ls, _, err = c.readListing(true, check)
		return ls, err
	})
}

// readListing is one try of openListing; stale says the cache is missing
// or too far behind, and a full listing should update it first (asked
// only before one did).
func (c *Cache) readListing(rebuilt, check bool) (ls *Start, stale bool, err error) {
	ls = &Start{Listing: &Listing{}, Checked: true}
	ls.Listing.refs.Store(1)
	dir, err := os.Open(c.st.SessionsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return ls, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("list sessions: %w", err)
	}
	defer dir.Close()
	var dst unix.Stat_t
	if err := unix.Fstat(int(dir.Fd()), &dst); err != nil {
		return nil, false, fmt.Errorf("list sessions: %w", err)
	}
	// Under the generation's shared lock, no settled record changes
	// through zwarm while the listing is made: any change after it
	// advances the generation the listing records.
	gen, unlock, genOK := c.st.Generation()
	defer unlock()
	ls.Listing.gen, ls.Listing.genOK = gen, genOK
	r := OpenIndex(c.st)
	if r == nil && !rebuilt {
		return ls, true, nil
	}

	// Which sessions there are: the cache's, while the directory is as
	// the cache saw it; else what it holds now.
	var present map[string]bool
	if r == nil || !r.Unchanged(dst.Mtim.Nano(), dst.Ctim.Nano(), int64(RacyWindow)) {
		if present, err = sessionNames(dir); err != nil {
			if r != nil {
				r.Close()
			}
			return nil, false, err
		}
	}
	if r == nil {
		for id := range present {
			ls.Rest = append(ls.Rest, id)
		}
		slices.Sort(ls.Rest)
		return ls, false, nil
	}
	l := ls.Listing
	l.r = r
	if err := l.walk(present); err != nil {
		r.Close()
		l.r = nil
		if !rebuilt {
			return ls, true, nil
		}
		return nil, false, listingErr(err)
	}

	if check || !genOK || r.Gen != gen {
		ls.checkFiles(int(dir.Fd()))
	} else {
		ls.Checked = false
	}
	for _, id := range r.Unsettled {
		if present == nil || present[id] {
			ls.Rest = append(ls.Rest, id)
		}
		delete(present, id)
	}
	for id := range present { // new since the cache was written
		ls.Rest = append(ls.Rest, id)
	}
	l.index()
	if !rebuilt && len(ls.Rest) > max(256, len(l.briefs)/rebuildShare) {
		return ls, true, nil
	}
	return ls, false, nil
}

// walk reads the cache's entries into the listing: those of sessions in
// present (nil: all of them). What it finds in present it deletes, so
// that present is left with the sessions the cache does not know.
func (l *Listing) walk(present map[string]bool) error {
	l.at = make([]int64, 0, l.r.Count)
	l.keys = make([]index.Key, 0, l.r.Count)
	l.briefs = make([]brief, 0, l.r.Count)
	d := &decoder{}
	ids := &arena{}
	shared := map[string]string{}
	intern := func(s string) string {
		if v, ok := shared[s]; ok {
			return v
		}
		v := strings.Clone(s)
		shared[v] = v
		return v
	}
	var b brief
	err := l.r.Walk(func(at int64, e index.Entry) bool {
		if present != nil {
			if !present[e.ID] {
				return true // gone since
			}
			delete(present, e.ID)
		}
		if !d.brief(e, &b) {
			d.err = errBadIndex
			return false
		}
		b.id = ids.str(b.id)
		b.status = record.Status(intern(string(b.status)))
		b.adapter, b.model, b.source = intern(b.adapter), intern(b.model), intern(b.source)
		l.at = append(l.at, at)
		l.keys = append(l.keys, e.Key)
		l.briefs = append(l.briefs, b)
		return true
	})
	if err == nil {
		err = d.err
	}
	return err
}

// keep drops the entries whose keep[i] is false.
func (l *Listing) keep(keep []bool) {
	n := 0
	for i, k := range keep {
		if k {
			l.at[n], l.keys[n], l.briefs[n] = l.at[i], l.keys[i], l.briefs[i]
			n++
		}
	}
	l.at, l.keys, l.briefs = l.at[:n], l.keys[:n], l.briefs[:n]
}

// index sorts the entries by id, for Find.
func (l *Listing) index() {
	l.byID = make([]int32, len(l.briefs))
	for i := range l.byID {
		l.byID[i] = int32(i)
	}
	slices.SortFunc(l.byID, func(a, b int32) int { return strings.Compare(l.briefs[a].id, l.briefs[b].id) })
}

// arena keeps many small strings in a few blocks: the ids of a listing.
type arena struct{ b []byte }

func (a *arena) str(s string) string {
	if s == "" {
		return ""
	}
	if len(a.b)+len(s) > cap(a.b) {
		a.b = make([]byte, 0, max(64<<10, len(s)))
	}
	a.b = append(a.b, s...)
	return unsafe.String(&a.b[len(a.b)-len(s)], len(s))
}

// checkFiles checks each summary against its record's file, one stat
// each: one changed behind zwarm's back is read again (Rest), and
// reported as broken if it is.
func (ls *Start) checkFiles(fd int) {
	l := ls.Listing
	checks := make([]FileCheck, len(l.briefs))
	for i := range l.briefs {
		checks[i] = FileCheck{l.briefs[i].id, l.keys[i]}
	}
	same := SameFiles(fd, checks)
	for i, ok := range same {
		if !ok {
			ls.Rest = append(ls.Rest, l.briefs[i].id)
		}
	}
	if len(ls.Rest) > 0 {
		l.keep(same)
	}
}

// sessionNames is the sessions the sessions dir holds: its entries that
// are session ids (a session being made or removed is a dot file).
func sessionNames(dir *os.File) (map[string]bool, error) {
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	present := make(map[string]bool, len(names))
	for _, id := range names {
		if !strings.HasPrefix(id, ".") && store.ValidID(id) == nil {
			present[id] = true
		}
	}
	return present, nil
}

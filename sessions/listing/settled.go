package listing

import (
	"os"

	"github.com/zwarm/zwarm/sessions/index"
)

// A subscription to every session watches the directories of the sessions
// that are not settled, not those of the settled ones: a watch costs the
// kernel memory and the subscription a system call each, and a state dir
// may hold 100,000 settled sessions. A settled record changes through
// zwarm only when a follow-up reopens it or a landing records itself, and
// both advance sessions.gen first (cache.go); when a writer of it closes
// it (genWatch) and the generation moved, the settled sessions' records
// are checked against the files they were read from, one stat each, and
// those that changed are looked at again. Bookkeeping that changes no
// settled session's summary (a kill's or a landing's claim let go) is
// not reported then, and neither is a record edited behind zwarm's back;
// a new subscription reads both.

// SettledSet is the settled sessions whose dirs a subscription does not
// watch, with the identity of the meta.json each was read from.
type SettledSet struct {
	l    *Listing
	off  []bool // the listing's entries no longer in the set
	keys map[string]index.Key
}

// NewSettledSet is the settled sessions of l.
func NewSettledSet(l *Listing) *SettledSet {
	return &SettledSet{l: l, off: make([]bool, l.Len()), keys: map[string]index.Key{}}
}

// Listed is where id is in the listing while the listing still stands for
// it.
func (ss *SettledSet) Listed(id string) (int, bool) {
	i, ok := ss.l.Find(id)
	if !ok || ss.off[i] {
		return 0, false
	}
	return i, true
}

// Add puts a settled session in the set, read from the file key names.
func (ss *SettledSet) Add(id string, key index.Key) {
	if i, ok := ss.Listed(id); ok {
		if ss.l.keys[i] == key {
			return
		}
		ss.off[i] = true
	}
	ss.keys[id] = key
}

// Drop takes a session out of the set: it is not settled, or gone.
func (ss *SettledSet) Drop(id string) {
	if i, ok := ss.Listed(id); ok {
		ss.off[i] = true
	}
	delete(ss.keys, id)
}

// Changed is the sessions of the set whose meta.json is not the file it
// was read from any more (changed, or gone), one stat each.
func (ss *SettledSet) Changed(sessionsDir string) []string {
	dir, err := os.Open(sessionsDir)
	if err != nil {
		// No sessions dir: every one of them is gone.
		return ss.All()
	}
	defer dir.Close()
	checks := make([]FileCheck, 0, ss.l.Len()+len(ss.keys))
	for i := range ss.l.briefs {
		if !ss.off[i] {
			checks = append(checks, FileCheck{ss.l.briefs[i].id, ss.l.keys[i]})
		}
	}
	for id, key := range ss.keys {
		checks = append(checks, FileCheck{id, key})
	}
	var out []string
	for i, same := range SameFiles(int(dir.Fd()), checks) {
		if !same {
			out = append(out, checks[i].ID)
		}
	}
	return out
}

func (ss *SettledSet) All() []string {
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

// Has reports whether id is in the set.
func (ss *SettledSet) Has(id string) bool {
	if _, ok := ss.Listed(id); ok {
		return true
	}
	_, ok := ss.keys[id]
	return ok
}

// Listing is the listing the set started from.
func (ss *SettledSet) Listing() *Listing { return ss.l }

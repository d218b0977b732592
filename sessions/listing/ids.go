package listing

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// Resolve turns a user's id or prefix into a full session id. A whole id
// is one stat (sessions/store); a prefix is looked up in the listing
// cache's sorted ids while the sessions dir has not changed since the
// cache read it, so that a command about one session costs the same among
// 100,000 as among 1,000; otherwise the directory's names are read.
func Resolve(st *state.Store, prefix string) (string, error) {
	p := NormalPrefix(prefix)
	if store.ValidID(p) == nil && len(p) < store.IDLen {
		if hits, ok := LookupPrefix(st, p); ok {
			return store.ResolveID(p, hits)
		}
	}
	return st.Files().ResolveSession(prefix)
}

// NormalPrefix is an id or prefix as ids are written: what a person
// types or pastes may have capitals and spaces around.
func NormalPrefix(prefix string) string { return strings.ToLower(strings.TrimSpace(prefix)) }

// LookupPrefix is the session dirs whose names start with prefix, as the
// listing cache knows them; ok is false when it cannot say (no cache, or
// the sessions dir changed since it was read).
func LookupPrefix(st *state.Store, prefix string) ([]string, bool) {
	var dst unix.Stat_t
	if unix.Stat(st.SessionsDir(), &dst) != nil {
		return nil, false
	}
	r := OpenIndex(st)
	if r == nil {
		return nil, false
	}
	defer r.Close()
	if !r.Unchanged(dst.Mtim.Nano(), dst.Ctim.Nano(), int64(RacyWindow)) {
		return nil, false
	}
	ids, err := r.Lookup(prefix)
	if err != nil {
		return nil, false
	}
	// The cache names what the directory held, not what each name is.
	hits := ids[:0]
	for _, id := range ids {
		if fi, err := os.Lstat(filepath.Join(st.SessionsDir(), id)); err == nil && fi.IsDir() {
			hits = append(hits, id)
		}
	}
	return hits, true
}

// CachedCount is how many sessions the state dir holds by the listing
// cache, while the sessions dir is as the cache saw it; ok is false
// otherwise, and a listing must count.
func (c *Cache) CachedCount() (n int, ok bool) {
	var dst unix.Stat_t
	if unix.Stat(c.st.SessionsDir(), &dst) == nil {
		if r := OpenIndex(c.st); r != nil {
			defer r.Close()
			if r.Unchanged(dst.Mtim.Nano(), dst.Ctim.Nano(), int64(RacyWindow)) {
				return r.IDs, true
			}
		}
	}
	return 0, false
}

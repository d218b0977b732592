package sessions

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// resolve turns a user's id or prefix into a full session id. A whole id
// is one stat (sessions/store); a prefix is looked up in the listing
// cache's sorted ids while the sessions dir has not changed since the
// cache read it, so that a command about one session costs the same among
// 100,000 as among 1,000; otherwise the directory's names are read.
func resolve(st *state.Store, prefix string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(prefix))
	if store.ValidID(p) == nil && len(p) < len(store.NewID()) {
		if hits, ok := lookupPrefix(st, p); ok {
			return store.ResolveID(p, hits)
		}
	}
	return st.Files().ResolveSession(prefix)
}

// lookupPrefix is the session dirs whose names start with prefix, as the
// listing cache knows them; ok is false when it cannot say (no cache, or
// the sessions dir changed since it was read).
func lookupPrefix(st *state.Store, prefix string) ([]string, bool) {
	var dst unix.Stat_t
	if unix.Stat(st.SessionsDir(), &dst) != nil {
		return nil, false
	}
	r := openIndex(st)
	if r == nil {
		return nil, false
	}
	defer r.Close()
	if !r.Unchanged(dst.Mtim.Nano(), dst.Ctim.Nano(), int64(racyWindow)) {
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

// Count is how many sessions the state dir holds, those whose records
// cannot be read included: the listing cache's count while the sessions
// dir is as the cache saw it, else a listing's.
func (m *Manager) Count(ctx context.Context) (int, error) {
	var dst unix.Stat_t
	if unix.Stat(m.st.SessionsDir(), &dst) == nil {
		if r := openIndex(m.st); r != nil {
			defer r.Close()
			if r.Unchanged(dst.Mtim.Nano(), dst.Ctim.Nano(), int64(racyWindow)) {
				return r.IDs, nil
			}
		}
	}
	list, err := m.List(ctx, ListOptions{})
	var le *ListError
	if errors.As(err, &le) {
		return len(list) + len(le.Records), nil
	}
	return len(list), err
}

package sessions

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The listing cache, sessions/.index, keeps the summary of every settled
// session (its record without the turns) with the identity of the
// meta.json it came from: size, modification time and inode. A listing
// stats each meta.json, reads only those that changed (or are not settled:
// their record moves while they run), and rewrites the cache when anything
// changed. It is never the source of truth: a missing, corrupt or foreign
// cache is rebuilt from the records, and since every record is checked
// against it, a crash at any instant leaves nothing stale. Writers of
// records never touch it; what it costs is paid by the next listing.

const (
	indexFile    = ".index"
	indexVersion = 1
)

// metaKey identifies one version of a meta.json: replacing the file (always
// by rename) changes its inode and time.
type metaKey struct {
	Size, MtimeNs int64
	Ino           uint64
}

type indexEntry struct {
	Key metaKey
	S   *Session
}

type sessionIndex struct {
	Version int
	Entries map[string]indexEntry
}

func (st *Store) indexPath() string { return filepath.Join(st.sessionsDir(), indexFile) }

// loadIndex reads the cache; anything wrong with it is an empty cache.
func (st *Store) loadIndex() *sessionIndex {
	ix := &sessionIndex{Version: indexVersion, Entries: map[string]indexEntry{}}
	data, err := os.ReadFile(st.indexPath())
	if err != nil {
		return ix
	}
	var got sessionIndex
	if gob.NewDecoder(bytes.NewReader(data)).Decode(&got) != nil || got.Version != indexVersion || got.Entries == nil {
		return ix
	}
	return &got
}

// saveIndex replaces the cache, best effort: a read-only state dir just
// goes without.
func (st *Store) saveIndex(ix *sessionIndex) {
	var buf bytes.Buffer
	if gob.NewEncoder(&buf).Encode(ix) != nil {
		return
	}
	writeFileAtomic(st.indexPath(), buf.Bytes())
}

// summary is a record as listings carry it: without its turns.
func (s *Session) summary() *Session {
	c := *s
	c.Turns, c.LegacyMessages = nil, nil
	return &c
}

// scan is one pass over every session for a listing: the cached summary of
// each settled session whose meta.json is unchanged, the current record of
// every other one. Records that cannot be read are returned beside.
func (m *Manager) scan(keep func(*Session) bool) ([]*Session, []*RecordError, error) {
	dir, err := os.Open(m.st.sessionsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list sessions: %w", err)
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, nil, fmt.Errorf("list sessions: %w", err)
	}
	ix := m.st.loadIndex()
	next := &sessionIndex{Version: indexVersion, Entries: make(map[string]indexEntry, len(ix.Entries))}
	changed := false
	rc := &readCtx{m: m}
	var out []*Session
	var bad []*RecordError
	fd := int(dir.Fd())
	for _, id := range names {
		if strings.HasPrefix(id, ".") || validID(id) != nil {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, id+"/meta.json", &st, 0); err != nil {
			if !errors.Is(err, unix.ENOENT) {
				bad = append(bad, &RecordError{ID: id, Err: fmt.Errorf("%s: %w", m.st.metaPath(id), err)})
			}
			continue // a session being created or removed
		}
		key := metaKey{Size: st.Size, MtimeNs: st.Mtim.Nano(), Ino: st.Ino}
		if e, ok := ix.Entries[id]; ok && e.Key == key && e.S != nil {
			next.Entries[id] = e
			if keep(e.S) {
				out = append(out, e.S.Clone())
			}
			continue
		}
		s, err := m.st.load(id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			re := &RecordError{ID: id, Err: err}
			errors.As(err, &re)
			bad = append(bad, re)
			continue
		}
		s = m.current(s, rc)
		// A record read while a reader recorded a dead owner has changed
		// since the stat: it is cached on the next listing.
		if s.Settled() && !s.Legacy || s.Legacy && s.legacyStatus.Finished() {
			next.Entries[id] = indexEntry{Key: key, S: s.summary()}
			changed = true
		}
		if keep(s) {
			out = append(out, s.summary())
		}
	}
	if changed || len(next.Entries) != len(ix.Entries) {
		m.st.saveIndex(next)
	}
	return out, bad, nil
}

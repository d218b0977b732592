// Package index is the file format of the session listing cache
// (sessions.index): opaque per-session entries kept newest first, read
// lazily from the front so that the newest few cost the same however many
// there are, and a sorted table of every id for prefix lookups. What an
// entry holds, and when the file may be trusted, is package sessions'
// business (its index.go); this package only stores and finds.
//
// Layout, integers little endian:
//
//	"ZWIX" version gen dirMtime dirCtime checked unsettled entries idsAt ids   (a fixed header)
//	unsettled ids, each a uvarint length and its bytes
//	entries, newest first, each a uvarint length and: size mtime ctime ino created id payload
//	the ids of every session (entries and unsettled), sorted, idLen bytes each, NUL padded
//
// A file whose sizes do not add up, or that does not decode, is no index.
package index

import (
	"cmp"
	"encoding/binary"
	"errors"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

const (
	magic   = "ZWIX"
	version = 9 // 9: the sessions' entries carry their earlier landings
	// idLen is the width of an id in the sorted table: a uuid's.
	idLen      = 36
	headerSize = len(magic) + 9*8
)

// ErrBad is a file that is not an index of this version.
var ErrBad = errors.New("malformed listing cache")

// Key identifies one version of a file: replacing it (always by rename)
// changes its inode and times; rewriting it in place changes its change
// time, which nothing but the kernel sets.
type Key struct {
	Size, MtimeNs, CtimeNs int64
	Ino                    uint64
}

// KeyOf is the identity of the file st describes.
func KeyOf(st *unix.Stat_t) Key {
	return Key{Size: st.Size, MtimeNs: st.Mtim.Nano(), CtimeNs: st.Ctim.Nano(), Ino: st.Ino}
}

// Entry is one session's cached record: Data is the caller's encoding.
// Entries read from a file share its bytes: they must not be changed.
type Entry struct {
	ID      string
	Key     Key
	Created int64 // orders the entries, newest first, then by id
	Data    []byte
}

// Index is a whole cache, as written.
type Index struct {
	Gen       uint64
	DirMtime  int64 // the sessions dir's modification time when it was read
	DirCtime  int64 // and its change time, which nobody can set back
	Checked   int64 // when that was
	Unsettled []string
	Entries   []Entry
}

// Newer orders entries as the file keeps them.
func Newer(a, b *Entry) int {
	return cmp.Or(cmp.Compare(b.Created, a.Created), strings.Compare(a.ID, b.ID))
}

// Encode is the file's content. Entries are sorted here (newest first).
func (ix *Index) Encode() ([]byte, error) {
	slices.SortFunc(ix.Entries, func(a, b Entry) int { return Newer(&a, &b) })
	ids := make([]string, 0, len(ix.Entries)+len(ix.Unsettled))
	size := headerSize
	for i := range ix.Entries {
		ids = append(ids, ix.Entries[i].ID)
		size += 64 + len(ix.Entries[i].ID) + len(ix.Entries[i].Data)
	}
	ids = append(ids, ix.Unsettled...)
	for _, id := range ids {
		if len(id) > idLen || id == "" || strings.IndexByte(id, 0) >= 0 {
			return nil, errors.New("listing cache: not a session id: " + id)
		}
	}
	slices.Sort(ids)
	b := make([]byte, headerSize, size+len(ids)*(idLen+8))
	copy(b, magic)
	b = b[:len(magic)]
	for _, v := range []uint64{version, ix.Gen, uint64(ix.DirMtime), uint64(ix.DirCtime), uint64(ix.Checked), uint64(len(ix.Unsettled)), uint64(len(ix.Entries)), 0, uint64(len(ids))} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	for _, id := range ix.Unsettled {
		b = appendStr(b, id)
	}
	var e []byte
	for i := range ix.Entries {
		en := &ix.Entries[i]
		e = e[:0]
		for _, v := range []int64{en.Key.Size, en.Key.MtimeNs, en.Key.CtimeNs, int64(en.Key.Ino), en.Created} {
			e = binary.LittleEndian.AppendUint64(e, uint64(v))
		}
		e = appendStr(e, en.ID)
		e = append(e, en.Data...)
		b = binary.AppendUvarint(b, uint64(len(e)))
		b = append(b, e...)
	}
	binary.LittleEndian.PutUint64(b[len(magic)+7*8:], uint64(len(b)))
	var slot [idLen]byte
	for _, id := range ids {
		clear(slot[:])
		copy(slot[:], id)
		b = append(b, slot[:]...)
	}
	return b, nil
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

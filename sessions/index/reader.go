package index

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"sort"
	"strings"
	"unsafe"
)

// Reader reads an index from the front: the header and the unsettled ids
// at Open, the entries one by one as they are asked for, so that the
// newest few of a hundred thousand cost what they cost of a thousand.
type Reader struct {
	Gen       uint64
	DirMtime  int64
	DirCtime  int64
	Checked   int64
	Unsettled []string
	// Count is the number of entries; IDs the number of ids in the table.
	Count, IDs int

	f       *os.File
	first   int64  // where the entries start
	buf     []byte // read, not yet decoded
	off     int64  // the file offset just past buf
	entries int64  // the end of the entries
	left    int    // entries not yet read
	err     error
}

// firstRead is what Open reads: the header, the unsettled ids and the
// newest entries of most state dirs.
const firstRead = 64 << 10

// Open reads path's header. Any error, a missing file included, means
// there is no usable index.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r := &Reader{f: f}
	if err := r.open(); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *Reader) open() error {
	fi, err := r.f.Stat()
	if err != nil {
		return err
	}
	if err := r.fill(firstRead); err != nil || len(r.buf) < headerSize || string(r.buf[:len(magic)]) != magic {
		return ErrBad
	}
	h := make([]uint64, 9)
	for i := range h {
		h[i] = binary.LittleEndian.Uint64(r.buf[len(magic)+8*i:])
	}
	if h[0] != version {
		return ErrBad
	}
	r.Gen, r.DirMtime, r.DirCtime, r.Checked = h[1], int64(h[2]), int64(h[3]), int64(h[4])
	unsettled, count, idsAt, ids := h[5], h[6], h[7], h[8]
	size := uint64(fi.Size())
	if idsAt < uint64(headerSize) || idsAt > size || (size-idsAt)%idLen != 0 || (size-idsAt)/idLen != ids ||
		count > size || unsettled > size || count+unsettled != ids {
		return ErrBad
	}
	r.Count, r.IDs, r.left, r.entries = int(count), int(ids), int(count), int64(idsAt)
	r.buf = r.buf[headerSize:]
	r.Unsettled = make([]string, unsettled)
	for i := range r.Unsettled {
		s, ok := r.str()
		if !ok {
			return ErrBad
		}
		r.Unsettled[i] = s
	}
	r.first = r.off - int64(len(r.buf))
	return nil
}

// Close releases the file.
func (r *Reader) Close() { r.f.Close() }

// Err is what stopped Next early: a file that does not decode.
func (r *Reader) Err() error { return r.err }

// Next is the next entry, newest first; false at the end or on an error
// (Err).
func (r *Reader) Next() (Entry, bool) {
	if r.left == 0 || r.err != nil {
		return Entry{}, false
	}
	n, k := r.uvarint()
	if k == 0 {
		// What was read ends inside the entry's length: read on.
		if err := r.fill(max(2*cap(r.buf), firstRead)); err != nil {
			return r.fail()
		}
		n, k = r.uvarint()
	}
	if k <= 0 || n < 5*8+1 || n > uint64(r.entries) {
		return r.fail()
	}
	if len(r.buf) < k+int(n) {
		// Read on, more each time: a listing of everything reads the
		// file in a few large reads.
		if err := r.fill(max(k+int(n), 2*cap(r.buf), firstRead)); err != nil || len(r.buf) < k+int(n) {
			return r.fail()
		}
	}
	b := r.buf[k : k+int(n)]
	r.buf = r.buf[k+int(n):]
	r.left--
	e, ok := parseEntry(b)
	if !ok {
		return r.fail()
	}
	return e, true
}

// parseEntry decodes an entry's bytes (what follows its length); the
// entry shares them.
func parseEntry(b []byte) (Entry, bool) {
	if len(b) < 5*8+1 {
		return Entry{}, false
	}
	var v [5]int64
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	e := Entry{Key: Key{Size: v[0], MtimeNs: v[1], CtimeNs: v[2], Ino: uint64(v[3])}, Created: v[4]}
	b = b[40:]
	l, k := binary.Uvarint(b)
	if k <= 0 || l > uint64(len(b)-k) || l == 0 {
		return Entry{}, false
	}
	e.ID = unsafe.String(&b[k], int(l))
	e.Data = b[k+int(l):]
	return e, true
}

func (r *Reader) fail() (Entry, bool) {
	r.err = ErrBad
	return Entry{}, false
}

// fill reads on until buf holds at least want bytes or the entries end.
// The bytes read before stay where they are: entries handed out point
// into them.
func (r *Reader) fill(want int) error {
	end := r.entries
	if end == 0 { // the header is not read yet
		end = 1 << 62
	}
	nb := make([]byte, len(r.buf), max(want, len(r.buf)))
	copy(nb, r.buf)
	for len(nb) < cap(nb) && r.off < end {
		k, err := r.f.ReadAt(nb[len(nb):min(cap(nb), len(nb)+int(min(end-r.off, 1<<30)))], r.off)
		nb = nb[:len(nb)+k]
		r.off += int64(k)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if k == 0 {
			break
		}
	}
	r.buf = nb
	return nil
}

func (r *Reader) uvarint() (uint64, int) { return binary.Uvarint(r.buf) }

func (r *Reader) str() (string, bool) {
	n, k := r.uvarint()
	if k <= 0 || n > uint64(len(r.buf)-k) || n == 0 {
		return "", false
	}
	s := unsafe.String(&r.buf[k], int(n))
	r.buf = r.buf[k+int(n):]
	return s, true
}

// Unchanged says whether a directory whose modification and change times
// are mtime and ctime holds what it held when it was read for this index:
// its times are the recorded ones, and its modification time was older
// than window then (a coarse clock gives two changes within a tick the
// same time).
func (r *Reader) Unchanged(mtime, ctime int64, window int64) bool {
	return r.DirMtime == mtime && r.DirCtime == ctime && r.Checked-mtime >= window
}

// Lookup returns the ids in the table that start with prefix, by binary
// search of the sorted table: a few small reads however many there are.
func (r *Reader) Lookup(prefix string) ([]string, error) {
	var slot [idLen]byte
	var err error
	at := func(i int) string {
		if _, e := r.f.ReadAt(slot[:], r.entries+int64(i)*idLen); e != nil {
			err = e
			return ""
		}
		n := idLen
		for n > 0 && slot[n-1] == 0 {
			n--
		}
		return string(slot[:n])
	}
	i := sort.Search(r.IDs, func(i int) bool { return at(i) >= prefix })
	var out []string
	for ; i < r.IDs && err == nil; i++ {
		id := at(i)
		if !strings.HasPrefix(id, prefix) {
			break
		}
		out = append(out, id)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

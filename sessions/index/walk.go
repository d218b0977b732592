package index

import (
	"encoding/binary"
	"errors"
	"io"
)

// walkChunk is how much of the file a walk holds at a time: the entries of
// a hundred thousand sessions pass through it, never all at once.
const walkChunk = 1 << 20

// Walk hands every entry to fn, newest first, with where it starts in the
// file (for EntryAt), reading the file in chunks of bounded size: an
// entry's bytes are valid only during its call. It stops early when fn
// returns false. Walk starts from the first entry whatever Next has read.
func (r *Reader) Walk(fn func(at int64, e Entry) bool) error {
	at := r.first
	var buf []byte
	bufAt := at // the file offset of buf[0]
	for left := r.Count; left > 0; left-- {
		b := buf[at-bufAt:]
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			// Not all of the entry is here: read on from its start, in a
			// buffer big enough for it.
			var err error
			if buf, err = r.readAt(buf, at, walkChunk); err != nil {
				return err
			}
			if n, k = binary.Uvarint(buf); k <= 0 || n > uint64(r.entries-at) {
				return ErrBad
			}
			if n > uint64(len(buf)-k) {
				if buf, err = r.readAt(buf, at, k+int(n)); err != nil {
					return err
				}
				if n > uint64(len(buf)-k) {
					return ErrBad
				}
			}
			bufAt, b = at, buf
		}
		e, ok := parseEntry(b[k : k+int(n)])
		if !ok {
			return ErrBad
		}
		if !fn(at, e) {
			return nil
		}
		at += int64(k) + int64(n)
	}
	return nil
}

// readAt fills buf (its bytes are not needed any more) with up to want
// bytes of the entries from the file offset at.
func (r *Reader) readAt(buf []byte, at int64, want int) ([]byte, error) {
	want = int(min(int64(want), r.entries-at))
	if cap(buf) < want || buf == nil {
		buf = make([]byte, 0, want)
	}
	buf = buf[:want]
	k, err := r.f.ReadAt(buf, at)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:k], nil
}

// EntryAt reads the entry that starts at the file offset at, as Walk gave
// it; the entry's bytes are its own.
func (r *Reader) EntryAt(at int64) (Entry, error) {
	if at < int64(headerSize) || at >= r.entries {
		return Entry{}, ErrBad
	}
	var head [binary.MaxVarintLen64]byte
	k, err := r.f.ReadAt(head[:min(int64(len(head)), r.entries-at)], at)
	if k == 0 && err != nil {
		return Entry{}, err
	}
	n, vk := binary.Uvarint(head[:k])
	if vk <= 0 || n < 5*8+1 || n > uint64(r.entries-at-int64(vk)) {
		return Entry{}, ErrBad
	}
	b := make([]byte, n)
	if _, err := r.f.ReadAt(b, at+int64(vk)); err != nil {
		return Entry{}, err
	}
	e, ok := parseEntry(b)
	if !ok {
		return Entry{}, ErrBad
	}
	return e, nil
}

package index

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// A walk hands out every entry in the order Next does, with the offsets
// EntryAt reads them back from, across chunk boundaries and entries
// bigger than a chunk.
func TestWalkAndEntryAt(t *testing.T) {
	ix := &Index{Unsettled: []string{id(5000)}}
	sizes := map[int]int{}
	for i := range 3000 {
		n := 300 + i%700
		if i%1000 == 7 {
			n = walkChunk + 12345 // bigger than a chunk
		}
		sizes[i] = n
		ix.Entries = append(ix.Entries, Entry{ID: id(i), Key: Key{Size: int64(i)}, Created: int64(i), Data: bytes.Repeat([]byte{byte(i)}, n)})
	}
	path := write(t, ix)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var want []string
	for e, ok := r.Next(); ok; e, ok = r.Next() {
		want = append(want, e.ID)
	}
	var got []string
	var offs []int64
	err = r.Walk(func(at int64, e Entry) bool {
		i := int(e.Key.Size)
		if e.ID != id(i) || len(e.Data) != sizes[i] || e.Data[0] != byte(i) || e.Data[len(e.Data)-1] != byte(i) {
			t.Fatalf("entry %d: %s, %d bytes", i, e.ID, len(e.Data))
		}
		got = append(got, strings.Clone(e.ID)) // its bytes are the walk's
		offs = append(offs, at)
		return true
	})
	for k := range min(len(got), len(want)) {
		if got[k] != want[k] {
			t.Fatalf("entry %d: walk %s, next %s", k, got[k], want[k])
		}
	}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 3000 {
		t.Fatalf("walk: %v, %d entries; next: %d, %v", err, len(got), len(want), r.Err())
	}
	for k, at := range offs {
		e, err := r.EntryAt(at)
		if err != nil || e.ID != got[k] || len(e.Data) != sizes[int(e.Key.Size)] {
			t.Fatalf("entry at %d: %v %s", at, err, e.ID)
		}
	}
	if _, err := r.EntryAt(offs[1] + 1); err == nil {
		t.Fatal("an offset inside an entry read as one")
	}
	stop := 0
	r.Walk(func(int64, Entry) bool { stop++; return stop < 10 })
	if stop != 10 {
		t.Fatalf("walk went on after false: %d", stop)
	}
}

// A file cut short or scribbled on is ErrBad to a walk, never a panic.
func TestWalkOfABrokenFile(t *testing.T) {
	ix := &Index{}
	for i := range 50 {
		ix.Entries = append(ix.Entries, Entry{ID: id(i), Created: int64(i), Data: []byte("payload")})
	}
	path := write(t, ix)
	data, _ := os.ReadFile(path)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	r.Walk(func(at int64, e Entry) bool { offs = append(offs, at); return true })
	r.Close()
	for _, at := range []int64{offs[3], offs[20], offs[49]} {
		bad := append([]byte(nil), data...)
		bad[at] = 0xff // a length that runs past the entries
		bad[at+1] = 0xff
		os.WriteFile(path, bad, 0o600)
		r, err := Open(path)
		if err != nil {
			continue
		}
		n := 0
		err = r.Walk(func(int64, Entry) bool { n++; return true })
		r.Close()
		if err == nil && n == 50 {
			t.Fatalf("scribbled at %d: walked all of it", at)
		}
	}
}

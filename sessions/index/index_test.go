package index

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func write(t *testing.T, ix *Index) string {
	t.Helper()
	data, err := ix.Encode()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sessions.index")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func id(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", 0x3f2a0000+i, i) }

// Entries come back newest first, whatever order they were given in, with
// their bytes; the header as written; every id found by any prefix.
func TestEntriesNewestFirstAndIDsByPrefix(t *testing.T) {
	ix := &Index{Gen: 7, DirMtime: 11, DirCtime: 12, Checked: 13, Unsettled: []string{id(1000), id(1001)}}
	for _, i := range []int{5, 0, 3, 9, 1, 2, 8, 7, 4, 6} {
		ix.Entries = append(ix.Entries, Entry{ID: id(i), Key: Key{Size: int64(i), Ino: uint64(i)}, Created: int64(i / 2), Data: []byte(fmt.Sprint("payload ", i))})
	}
	path := write(t, ix)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Gen != 7 || r.DirMtime != 11 || r.DirCtime != 12 || r.Checked != 13 || r.Count != 10 || r.IDs != 12 ||
		!slices.Equal(r.Unsettled, ix.Unsettled) {
		t.Fatalf("header: %+v", r)
	}
	var got []string
	for e, ok := r.Next(); ok; e, ok = r.Next() {
		if string(e.Data) != "payload "+fmt.Sprint(e.Key.Size) || e.Key.Ino != uint64(e.Key.Size) {
			t.Fatalf("entry %s: %q %+v", e.ID, e.Data, e.Key)
		}
		got = append(got, e.ID)
	}
	want := []string{id(8), id(9), id(6), id(7), id(4), id(5), id(2), id(3), id(0), id(1)}
	if r.Err() != nil || !slices.Equal(got, want) {
		t.Fatalf("order %v, %v; want %v", got, r.Err(), want)
	}
	for _, tc := range []struct {
		prefix string
		n      int
	}{{"3f2a", 12}, {id(3)[:8], 1}, {id(3), 1}, {id(1000)[:8], 1}, {"3f2b", 0}, {"0", 0}, {"f", 0}} {
		hits, err := r.Lookup(tc.prefix)
		if err != nil || len(hits) != tc.n {
			t.Errorf("lookup %q: %v, %v; want %d", tc.prefix, hits, err, tc.n)
		}
	}
}

// A file cut short anywhere, or of another version, is no index: Open or
// Next says so, and nothing panics.
func TestATruncatedFileIsNoIndex(t *testing.T) {
	ix := &Index{Unsettled: []string{id(99)}}
	for i := range 50 {
		ix.Entries = append(ix.Entries, Entry{ID: id(i), Created: int64(i), Data: make([]byte, 3000)})
	}
	path := write(t, ix)
	whole, _ := os.ReadFile(path)
	for n := 0; n < len(whole); n += 1 + n/7 {
		os.WriteFile(path, whole[:n], 0o600)
		r, err := Open(path)
		if err != nil {
			continue
		}
		k := 0
		for _, ok := r.Next(); ok; _, ok = r.Next() {
			k++
		}
		r.Close()
		if r.Err() == nil && k == 50 {
			t.Fatalf("cut to %d of %d bytes: read whole", n, len(whole))
		}
	}
	bad := slices.Clone(whole)
	bad[len(magic)] = 99 // version
	os.WriteFile(path, bad, 0o600)
	if _, err := Open(path); err == nil {
		t.Fatal("another version opened")
	}
	if _, err := (&Index{Unsettled: []string{id(1) + "0"}}).Encode(); err == nil {
		t.Fatal("an id longer than the table's slot was written")
	}
}

// Next reads on when what it has read ends inside an entry's length, as
// it does inside the entry: every boundary is somewhere in some file.
func TestNextAcrossALengthCutByARead(t *testing.T) {
	cut := false
	for pad := 0; pad < 600 && !cut; pad++ {
		ix := &Index{}
		for i := range 400 {
			n := 300 // a length of two bytes
			if i == 399 {
				n += pad // the newest: it moves all the others
			}
			ix.Entries = append(ix.Entries, Entry{ID: id(i), Created: int64(i), Data: make([]byte, n)})
		}
		r, err := Open(write(t, ix))
		if err != nil {
			t.Fatal(err)
		}
		// Only a file with an entry whose length straddles the end of the
		// first read is the case.
		r.Walk(func(at int64, e Entry) bool {
			cut = cut || at == firstRead-1
			return !cut
		})
		if !cut {
			r.Close()
			continue
		}
		n := 0
		for _, ok := r.Next(); ok; _, ok = r.Next() {
			n++
		}
		r.Close()
		if n != 400 || r.Err() != nil {
			t.Fatalf("pad %d: %d entries, %v", pad, n, r.Err())
		}
	}
	if !cut {
		t.Fatal("no file had a length cut by the first read")
	}
}

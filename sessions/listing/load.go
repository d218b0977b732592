package listing

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/index"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// loaded is one record read for a listing: the identity of its meta.json
// and the record, or why either could not be had.
type loaded struct {
	st      unix.Stat_t
	statErr error
	s       *record.Session
	err     error
}

// LoadBatch is how many records a listing reads ahead of using them: enough
// to keep every processor busy, few enough that the full records (turns
// and all) of a big state dir are never held at once.
const LoadBatch = 256

// LoadAll stats and reads the records of ids (a directory fd's entries),
// on as many goroutines as there are processors when there are enough
// records to share: the first listing of a big state dir, or one after its
// cache was lost, is mostly decoding JSON.
func LoadAll(st *state.Store, fd int, ids []string) []loaded {
	out := make([]loaded, len(ids))
	one := func(i int) {
		l := &out[i]
		if l.statErr = unix.Fstatat(fd, ids[i]+"/meta.json", &l.st, 0); l.statErr == nil {
			l.s, l.err = st.Load(ids[i])
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(ids)/32)
	if workers < 2 {
		for i := range ids {
			one(i)
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(ids); i = int(next.Add(1)) - 1 {
				one(i)
			}
		})
	}
	wg.Wait()
	return out
}

// SameFiles says, for each cached summary, whether its meta.json is still
// the file it was made from (size, modification and change time, inode).
// A stat each is what a listing of a settled state dir costs: it is what
// catches a record changed behind zwarm's back (an editor, a restored
// backup, a disk that corrupted it), which no generation counter sees. The
// stats share the processors when there are enough of them.
func SameFiles(fd int, cached []FileCheck) []bool {
	out := make([]bool, len(cached))
	one := func(lo, hi int) {
		var st unix.Stat_t
		// One path buffer for all, rather than a string made per stat.
		var path [128]byte
		for i := lo; i < hi; i++ {
			id := cached[i].ID
			if len(id)+len("/meta.json") > len(path) {
				continue // not an id: read below, where it is refused
			}
			n := copy(path[:], id)
			n += copy(path[n:], "/meta.json")
			err := unix.Fstatat(fd, unsafe.String(&path[0], n), &st, unix.AT_SYMLINK_NOFOLLOW)
			out[i] = err == nil && index.KeyOf(&st) == cached[i].Key
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(cached)/statShare)
	if workers < 2 {
		one(0, len(cached))
		return out
	}
	var wg sync.WaitGroup
	per := (len(cached) + workers - 1) / workers
	for lo := 0; lo < len(cached); lo += per {
		wg.Go(func() { one(lo, min(lo+per, len(cached))) })
	}
	wg.Wait()
	return out
}

// FileCheck is a cached record to check: its id and the identity of the
// meta.json it came from.
type FileCheck struct {
	ID  string
	Key index.Key
}

// statShare is how many stats make it worth another goroutine.
const statShare = 256

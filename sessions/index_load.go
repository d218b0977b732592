package sessions

import (
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// loaded is one record read for a listing: the identity of its meta.json
// and the record, or why either could not be had.
type loaded struct {
	st      unix.Stat_t
	statErr error
	s       *Session
	err     error
}

// loadBatch is how many records a listing reads ahead of using them: enough
// to keep every processor busy, few enough that the full records (turns
// and all) of a big state dir are never held at once.
const loadBatch = 256

// loadAll stats and reads the records of ids (a directory fd's entries),
// on as many goroutines as there are processors when there are enough
// records to share: the first listing of a big state dir, or one after its
// cache was lost, is mostly decoding JSON.
func (st *Store) loadAll(fd int, ids []string) []loaded {
	out := make([]loaded, len(ids))
	one := func(i int) {
		l := &out[i]
		if l.statErr = unix.Fstatat(fd, ids[i]+"/meta.json", &l.st, 0); l.statErr == nil {
			l.s, l.err = st.load(ids[i])
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

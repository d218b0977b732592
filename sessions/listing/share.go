package listing

import (
	"slices"
	"sync"
	"time"
	"weak"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/index"
)

// sharedListing makes the listings of a Manager's subscriptions to every
// session one at a time, and hands the last one made to the next
// subscription while the state it was made from stands: the sessions dir,
// the cache file and the generation as they were. The dashboard holds
// two such subscriptions (its own, and the worker watchers'); with a
// sessions dir changed since the cache was written, each would read the
// 100,000 names of the dir and walk the cache. A listing never changes,
// so sharing it is sharing a value; only its file is counted (refs). The
// last one is held weakly: it goes with the subscriptions that read it.
type sharedListing struct {
	mu      sync.Mutex
	last    weak.Pointer[Listing]
	rest    []string
	checked bool
	key     listingKey
	made    time.Time
}

// listingKey is the state a listing was made from.
type listingKey struct {
	dirMtime, dirCtime int64
	index              index.Key
	gen                uint64
}

// listingKeyOf is the state m's listing would be made from now; false when
// it cannot be told (no sessions dir or cache, a writer of sessions.gen at
// work).
func (c *Cache) listingKeyOf() (listingKey, bool) {
	var dst, ist unix.Stat_t
	if unix.Stat(c.st.SessionsDir(), &dst) != nil || unix.Stat(IndexPath(c.st), &ist) != nil {
		return listingKey{}, false
	}
	gen, ok := c.st.PeekGeneration()
	return listingKey{dirMtime: dst.Mtim.Nano(), dirCtime: dst.Ctim.Nano(), index: index.KeyOf(&ist), gen: gen}, ok
}

// open returns the last listing made, if the state it was made from
// stands, or what make makes (and keeps it for the next). A sessions dir
// changed within racyWindow of the listing (a coarse clock gives two
// changes the same time) is not trusted to have stood.
func (sl *sharedListing) open(c *Cache, check bool, make func() (*Start, error)) (*Start, error) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	key, keyed := c.listingKeyOf()
	if l := sl.last.Value(); keyed && l != nil && key == sl.key && (sl.checked || !check) &&
		sl.made.UnixNano()-key.dirMtime >= int64(RacyWindow) && l.acquire() {
		return &Start{Listing: l, Rest: slices.Clone(sl.rest), Checked: sl.checked}, nil
	}
	made := time.Now()
	ls, err := make()
	if err != nil {
		return nil, err
	}
	sl.last = weak.Pointer[Listing]{}
	if after, ok := c.listingKeyOf(); keyed && ok && after == key {
		sl.last, sl.rest, sl.checked, sl.key, sl.made = weak.Make(ls.Listing), slices.Clone(ls.Rest), ls.Checked, key, made
	}
	return ls, nil
}

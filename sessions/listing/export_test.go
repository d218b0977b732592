package listing

import (
	"time"

	"github.com/zwarm/zwarm/sessions/state"
)

// RewriteCache writes the listing cache again as it is, for a test that
// kills a writer at work.
func RewriteCache(st *state.Store) { saveIndex(st, loadIndex(st)) }

// SetStaleTemp sets how old a temporary cache file must be to be removed,
// and returns what puts it back.
func SetStaleTemp(d time.Duration) (restore func()) {
	was := staleTemp
	staleTemp = d
	return func() { staleTemp = was }
}

package workspace

import (
	"errors"
	"fmt"

	"github.com/zwarm/zwarm/sessions/store"
)

// ErrUnlanded is what an *Unlanded is (errors.Is): work never landed.
var ErrUnlanded = errors.New("work never landed")

// Unlanded is a removal refused because it would drop a worker's work:
// commits never landed, or files never committed.
type Unlanded struct {
	ID, Branch string
	Commits    int
	Stat       *Stat
	// Uncommitted counts files in the worktree that are not committed.
	Uncommitted int
}

func (e *Unlanded) Error() string {
	what := ""
	if e.Commits > 0 {
		what = fmt.Sprintf("%s has %s never landed", e.Branch, plural(e.Commits, "commit"))
		if e.Stat != nil && !e.Stat.Empty() {
			what += " (" + e.Stat.String() + ")"
		}
	}
	if e.Uncommitted > 0 {
		if what != "" {
			what += ", and "
		}
		what += fmt.Sprintf("its worktree has %s never committed", plural(e.Uncommitted, "file"))
	}
	id := store.ShortID(e.ID)
	return fmt.Sprintf("session %s: %s; land them with zwarm land %s, see them with zwarm diff %s, or pass --force to drop them", id, what, id, id)
}

func (e *Unlanded) Unwrap() error { return ErrUnlanded }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

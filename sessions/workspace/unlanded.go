package workspace

import (
	"errors"
	"fmt"
	"strings"

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
	// ByHand: those files were changed after the worker's last turn was
	// committed, by a person. A landing takes the worker's work, not
	// theirs: committed there, they land with it.
	ByHand bool
	// Path is the worktree's.
	Path string
	// ResetAway are the turns whose work the worker moved its branch off,
	// never landed: kept only by zwarm, until the worktree goes.
	ResetAway []int
	// Nested are those of the uncommitted files that are repositories of
	// the worker's own ("app/"), which neither diff nor land takes.
	Nested []string
}

// What says what would be dropped, and no command to run: for callers
// (a model's tools) that run none of the commands Error names.
func (e *Unlanded) What() string {
	what, _ := e.parts()
	return strings.Join(what, ", and ")
}

func (e *Unlanded) Error() string {
	what, how := e.parts()
	return fmt.Sprintf("session %s: %s; %s, or pass --force to drop them", store.ShortID(e.ID), strings.Join(what, ", and "), how)
}

// parts are what would be dropped, and how to keep it with zwarm's
// commands.
func (e *Unlanded) parts() (what []string, how string) {
	if e.Commits > 0 {
		c := fmt.Sprintf("%s has %s never landed", e.Branch, plural(e.Commits, "commit"))
		if e.Stat != nil && !e.Stat.Empty() {
			c += " (" + e.Stat.String() + ")"
		}
		what = append(what, c)
	}
	id := store.ShortID(e.ID)
	how = fmt.Sprintf("land them with zwarm land %s, see them with zwarm diff %s", id, id)
	switch {
	case e.Uncommitted > 0 && e.ByHand:
		what = append(what, fmt.Sprintf("its worktree has %s changed by hand since the worker's last turn, never committed", plural(e.Uncommitted, "file")))
		q := shellQuote(e.Path)
		how = fmt.Sprintf("a landing takes only what is committed there: commit them (cd %s && git add -A && git commit), and zwarm land %s lands them", q, id)
	case e.Uncommitted > 0:
		what = append(what, fmt.Sprintf("its worktree has %s never committed", plural(e.Uncommitted, "file")))
		if len(e.Nested) > 0 {
			// land and diff refuse these: they are not the way.
			is := map[bool]string{true: "is", false: "are each"}[len(e.Nested) == 1]
			how = fmt.Sprintf("%s %s a git repository of its own, which zwarm does not commit: remove its .git to have its files committed as the worker's (zwarm inject %s \"remove %s.git\"), then land it",
				strings.Join(e.Nested, ", "), is, id, e.Nested[0])
		}
	}
	if len(e.ResetAway) > 0 {
		turns := make([]string, len(e.ResetAway))
		for i, n := range e.ResetAway {
			turns[i] = fmt.Sprint(n)
		}
		what = append(what, fmt.Sprintf("its branch no longer holds the work of turn %s, never landed (the worker moved the branch off it)", strings.Join(turns, ", ")))
		see := fmt.Sprintf("see it with zwarm diff --turn %d %s", e.ResetAway[0], id)
		if e.Commits == 0 && e.Uncommitted == 0 {
			how = see
		} else {
			how += "; " + see
		}
	}
	return what, how
}

// shellQuote quotes s for sh where it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (e *Unlanded) Unwrap() error { return ErrUnlanded }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

package workspace

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/zwarm/zwarm/sessions/proc"
)

// A git that is killed while it holds a lock file leaves it behind, and
// every later write then fails ("Unable to create '.../index.lock': File
// exists") until someone removes the file. zwarm's gits are killed when
// their zwarm dies (git.go), so a supervisor killed during a turn's
// commit leaves one. Where only zwarm's gits and the worker's write (the
// worktree's own git dir, and the worker's repository), a write that
// runs into a lock file removes it when it is a leftover, and runs once
// more. A leftover is a lock file that has not changed for a second,
// that no process has open, while no git works in the worktree or the
// repository: git closes a lock file long before it lets it go (git
// commit -a holds the index's through the editor and the hooks; a ref
// transaction holds its refs' through its hook), so no process having it
// open is not enough.

// leftLocks are the lock files a write may find that a killed git left.
type leftLocks struct {
	paths []string
	// dirs are where a git at work on them would run.
	dirs []string
	// removed is told of each lock file removed, to say so.
	removed func(path string)
}

// lockQuiet is how long a lock file must have gone unchanged before it
// can count as left.
const lockQuiet = time.Second

// leftLocks are the lock files of a write in the worktree: those of its
// own git dir, of its branch and the packed refs in the worker's
// repository, and of its branch in yours (zwarm/<id>, which only zwarm
// moves). A git at work on any of them may run in the worktree, in the
// repositories, or in your checkout.
func (w *Worktree) leftLocks() leftLocks {
	admin := w.admin()
	l := leftLocks{
		paths: []string{admin + "/index.lock", admin + "/HEAD.lock"},
		dirs:  []string{w.Path, admin, w.CommonDir, filepath.Dir(w.CommonDir)},
		removed: func(path string) {
			w.Undone = append(w.Undone, fmt.Sprintf("removed %s, a lock file that no process held and no git worked on (one a git killed as it wrote there leaves behind)", path))
		},
	}
	if w.OwnDir != "" {
		l.paths = append(l.paths, w.OwnDir+"/refs/heads/"+w.Branch+".lock", w.OwnDir+"/packed-refs.lock",
			w.CommonDir+"/refs/heads/"+w.Branch+".lock")
		l.dirs = append(l.dirs, w.OwnDir)
		// Another worktree of the worker's repository, made by hand.
		others, _ := filepath.Glob(w.OwnDir + "/worktrees/*/gitdir")
		for _, o := range others {
			if b, err := os.ReadFile(o); err == nil {
				l.dirs = append(l.dirs, filepath.Dir(strings.TrimSpace(string(b))))
			}
		}
	}
	return l
}

// keptLocks is leftLocks for a write of the ref that keeps commit in your
// repository (keepRefs), which only zwarm writes: a zwarm killed as it
// kept a turn's commit left its lock, and every later keep of that commit
// failed on it.
func (w *Worktree) keptLocks(commit string) func() leftLocks {
	return func() leftLocks {
		l := w.leftLocks()
		l.paths = append(l.paths, w.CommonDir+"/"+keepRefs(w.Branch)+commit+".lock")
		return l
	}
}

// clear is called with the error of a write that failed. When git says
// it could not make one of the lock files (it names the file, in any
// language), clear removes it if it is a leftover, and reports whether
// the write is worth running again (the lock file is gone now). err
// comes back saying why a lock file was kept.
func (l leftLocks) clear(ctx context.Context, err error) (bool, error) {
	lock := ""
	said := strings.ReplaceAll(err.Error(), "/./", "/") // git in its git dir names it ".git/./refs/…"
	for _, p := range l.paths {
		if strings.Contains(said, p) {
			lock = p
		}
	}
	if lock == "" {
		return false, err
	}
	var was syscall.Stat_t
	if syscall.Lstat(lock, &was) != nil {
		return true, err // its git was done a moment after
	}
	// ctime, not mtime: no one can set it back, or ahead.
	if wait := lockQuiet - time.Since(time.Unix(was.Ctim.Unix())); wait > 0 {
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(min(wait, lockQuiet)):
		}
	}
	why := l.busy(ctx, lock, time.Unix(was.Ctim.Unix()))
	var now syscall.Stat_t
	if why == "" && (syscall.Lstat(lock, &now) != nil || now.Ino != was.Ino || now.Dev != was.Dev || now.Ctim != was.Ctim) {
		why = "it changed while zwarm looked at it"
	}
	if why != "" {
		return false, fmt.Errorf("%w (%s is kept: %s)", err, lock, why)
	}
	gone, rerr := removeIfSame(lock, &was)
	if rerr != nil {
		return false, fmt.Errorf("%w (%s was left by a git that is gone, and could not be removed: %v)", err, lock, rerr)
	}
	if gone && l.removed != nil {
		l.removed(lock)
	}
	return gone, err
}

// busy says why lock may be in use: a process has it open, a git that
// started before it was made works where it may be its, or what
// processes hold cannot all be seen. "" when none.
func (l leftLocks) busy(ctx context.Context, lock string, made time.Time) string {
	use, err := proc.Users(ctx, []string{lock}, l.dirs, "git")
	switch {
	case err != nil:
		return fmt.Sprintf("zwarm cannot tell whether a process holds it (%v)", err)
	case len(use.Open[lock]) > 0:
		return "held open by " + describe(use.Open[lock][0])
	}
	for _, o := range use.Within {
		// Start times are known to the second, and a git started after
		// the lock was made cannot be holding it.
		if !o.Start.After(made.Add(time.Second)) && !strings.Contains(o.Command, "--daemon") {
			return describe(o) + ", which started before it was made, is at work on the repository"
		}
	}
	if use.Unseen > 0 {
		return fmt.Sprintf("zwarm cannot see the open files of %d of your processes", use.Unseen)
	}
	return ""
}

// removeIfSame removes lock if it is still the file that was looked at:
// moved aside first (a rename is one step), and put back if it is not.
// gone is false when lock had changed meanwhile, or was no longer there.
func removeIfSame(lock string, was *syscall.Stat_t) (gone bool, err error) {
	aside := lock + ".zwarm-left-" + strconv.Itoa(os.Getpid())
	if err := os.Rename(lock, aside); err != nil {
		if os.IsNotExist(err) {
			return false, nil
		}
		return false, err
	}
	// The inode says it is the same file (a rename changes its ctime);
	// git makes every lock file anew.
	var now syscall.Stat_t
	if syscall.Lstat(aside, &now) == nil && now.Dev == was.Dev && now.Ino == was.Ino {
		return true, os.Remove(aside)
	}
	// Made again, by a git at work, since it was looked at: it goes
	// back, unless another has taken its place.
	if err := os.Link(aside, lock); err != nil {
		return false, fmt.Errorf("put back %s: %w", lock, err)
	}
	return false, os.Remove(aside)
}

// describe names a process, its command cut short, with no control
// character (a worker names its processes as it likes).
func describe(o proc.Opener) string {
	c := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, o.Command)
	if r := []rune(c); len(r) > 100 {
		c = string(r[:100]) + "…"
	}
	if c == "" {
		c = o.Comm
	}
	return fmt.Sprintf("pid %d (%s)", o.PID, c)
}

// rewind makes stdin readable from its start again, for a command run a
// second time; false when it cannot be.
func rewind(stdin io.Reader) bool {
	if stdin == nil {
		return true
	}
	s, ok := stdin.(io.Seeker)
	if !ok {
		return false
	}
	_, err := s.Seek(0, io.SeekStart)
	return err == nil
}

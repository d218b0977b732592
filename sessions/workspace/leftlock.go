package workspace

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/zwarm/zwarm/sessions/proc"
)

// A git that is killed can leave a lock file behind: git removes its
// lock files on SIGTERM, but sets up the handler that does so only once
// it has made its first one (a zwarm killed in that moment, the SIGTERM
// its git then gets comes too early), and on SIGKILL never. Every later
// write then fails ("Unable to create '.../index.lock': File exists")
// until someone removes the file. git holds a lock file open from the
// moment it makes it until it renames it into place, so one that no
// process has open, and that has not been written for a while, is such a
// leftover. zwarm removes those only where no git of yours writes: the
// worktree's own git dir, and the worker's repository, which zwarm made.

// leftLocks are lock files that a write may find left by a killed git.
type leftLocks struct {
	paths []string
	// removed is told of each lock file removed, to say so.
	removed func(path string)
}

// lockQuiet is how long a lock file that no process holds must have gone
// unwritten before it counts as left: git closes a lock file just before
// it renames it into place, and a git caught in between keeps it.
const lockQuiet = time.Second

// leftLocks are the lock files of a write in the worktree: those of its
// own git dir, and of its branch and the packed refs in the worker's
// repository.
func (w *Worktree) leftLocks() leftLocks {
	paths := []string{filepath.Join(w.admin(), "index.lock"), filepath.Join(w.admin(), "HEAD.lock")}
	if w.OwnDir != "" {
		paths = append(paths, filepath.Join(w.OwnDir, "refs", "heads", filepath.FromSlash(w.Branch)+".lock"),
			filepath.Join(w.OwnDir, "packed-refs.lock"))
	}
	return leftLocks{paths: paths, removed: func(path string) {
		w.Undone = append(w.Undone, fmt.Sprintf("removed %s, a lock file no process held (one a git killed as it wrote there leaves behind)", path))
	}}
}

// clear is called with the error of a write that failed: it removes the
// lock files that were left, and reports whether the write is worth
// running again (a lock file it ran into is gone now, or was removed).
// err comes back naming the process that holds a lock file that is not
// left. git names the lock file it could not make, whatever the language
// it speaks: when it names one of these, only that one is looked at.
func (l leftLocks) clear(ctx context.Context, err error) (bool, error) {
	type seen struct {
		path string
		st   syscall.Stat_t
	}
	paths, named := l.paths, false
	for _, p := range l.paths {
		if strings.Contains(err.Error(), p) {
			paths, named = []string{p}, true
			break
		}
	}
	var there []seen
	var newest time.Time
	for _, p := range paths {
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) == nil {
			there = append(there, seen{p, st})
			newest = later(newest, time.Unix(st.Mtim.Unix()))
		}
	}
	if len(there) == 0 {
		// The one git named is gone: its holder was done a moment after.
		return named, err
	}
	if wait := lockQuiet - time.Since(newest); wait > 0 {
		select {
		case <-ctx.Done():
			return false, err
		case <-time.After(wait):
		}
	}
	names := make([]string, len(there))
	for i, s := range there {
		names[i] = s.path
	}
	holders := proc.Openers(names)
	again := false
	for _, s := range there {
		if o := holders[s.path]; len(o) > 0 {
			err = fmt.Errorf("%w (%s is held open by pid %d, %s)", err, s.path, o[0].PID, commandOf(o[0]))
			continue
		}
		var now syscall.Stat_t
		switch {
		case syscall.Lstat(s.path, &now) != nil:
			again = true // gone meanwhile
		case now.Ino != s.st.Ino || now.Dev != s.st.Dev || now.Mtim != s.st.Mtim || now.Ctim != s.st.Ctim || now.Size != s.st.Size:
			// Written, or made again, since it was first looked at: a
			// git at work.
		case os.Remove(s.path) == nil:
			again = true
			if l.removed != nil {
				l.removed(s.path)
			}
		}
	}
	return again, err
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// commandOf is what the holder runs, cut short, with no control
// character (a worker names its processes as it likes).
func commandOf(o proc.Opener) string {
	c := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, o.Command)
	switch r := []rune(c); {
	case len(r) == 0:
		return "its command unknown"
	case len(r) > 100:
		return string(r[:100]) + "…"
	}
	return c
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

package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// git opens .gitattributes and each directory's .gitignore by name, and
// would wait on a FIFO the worker made there for good: a turn's commit,
// then every diff, landing and removal after it, and whoever asked with
// them; a FIFO in a nested repository's git dir holds git's look at it.
// A FIFO, socket or device in a tracked file's place makes git refuse the
// whole turn. None of them can be committed.

// eachSpecial calls f for every FIFO, socket and device in the worktree,
// nested repositories' git dirs included. A directory it cannot read, it
// makes readable first when fix says so (the worker's, which git would
// open all the same), else skips.
func (w *Worktree) eachSpecial(fix bool, f func(path string, mode fs.FileMode) error) error {
	return (&sweeper{fix: fix, f: f}).walk(w.Path)
}

// walk walks the worktree at top.
func (s *sweeper) walk(top string) error {
	top = filepath.Clean(top)
	return s.visit(unix.AT_FDCWD, top, ".", top, true)
}

// sweeper walks a worktree for special files. Each directory is opened
// from its parent's descriptor, never by its whole path, and never
// through a symlink: a turn's commit walks every directory of the
// worktree before git reads it, and resolving each path from the root
// again made the walk of a 20,000-file repository 20 ms where it is now
// 15 to 17. With what the last sweep found (known), a directory whose
// stamp still holds is not read at all: 3.5 ms
// (BenchmarkSweepInRepo20000Files/again, swept.go).
type sweeper struct {
	fix bool
	f   func(path string, mode fs.FileMode) error

	// Set for a sweep that records what it read (sweepSpecial).
	began time.Time
	root  uint64              // the top's device: stamps below a mount point are not trusted
	known map[string]sweptDir // the last sweep's, by path below the top ("." the top)
	seen  map[string]sweptDir // this one's
	read  bool                // whether it read a directory
}

// visit walks the directory rel (path in full), which is name in the
// directory at (a path of directories that have not changed since the
// last sweep, when that was not opened); a symlink in its place is
// followed only when follow says so.
func (s *sweeper) visit(at int, name, rel, path string, follow bool) error {
	if len(path) >= unix.PathMax {
		// As a walk by whole paths ended, and as git's own does: each
		// level below holds a descriptor and a longer path.
		return &fs.PathError{Op: "open", Path: path, Err: syscall.ENAMETOOLONG}
	}
	if was, ok := s.known[rel]; ok && s.holds(at, name, was.stamp, follow) {
		// No entry made, removed or renamed in it since it was read:
		// only its subdirectories can hold anything new.
		s.seen[rel] = was
		for _, sub := range was.subdirs {
			if err := s.visit(at, name+"/"+sub, join(rel, sub), path+"/"+sub, false); err != nil {
				return err
			}
		}
		return nil
	}
	fd, err := openDir(at, name, follow)
	if errors.Is(err, unix.EACCES) && s.fix {
		fd, err = openDirMadeReadable(at, name, follow)
	}
	if err != nil {
		return unlessUnread(err, &fs.PathError{Op: "open", Path: path, Err: err})
	}
	// Kept open while the walk is below it: its entries are opened from
	// it.
	dir := os.NewFile(uintptr(fd), path)
	defer dir.Close()
	st, stamped := s.stampOpen(fd)
	ents, err := dir.ReadDir(-1)
	if err != nil {
		return unlessUnread(err, err)
	}
	var subdirs []string
	for _, d := range ents {
		switch {
		case d.IsDir():
			subdirs = append(subdirs, d.Name())
			if err := s.visit(fd, d.Name(), join(rel, d.Name()), path+"/"+d.Name(), false); err != nil {
				return err
			}
		case d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0:
		default:
			// What is removed from it changes its stamp: it is read again
			// next time.
			stamped = false
			if err := s.f(path+"/"+d.Name(), d.Type()); err != nil {
				return err
			}
		}
	}
	if stamped {
		s.seen[rel] = sweptDir{stamp: st, subdirs: subdirs}
	}
	return nil
}

// join is rel/name, for paths below the top.
func join(rel, name string) string {
	if rel == "." {
		return name
	}
	return rel + "/" + name
}

// unlessUnread is nil for err that says the directory is gone meanwhile,
// not to be read, or no directory now; wrapped otherwise.
func unlessUnread(err, wrapped error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) {
		return nil
	}
	return wrapped
}

// openDirMadeReadable opens the directory name in at after making it
// readable and searchable (0700); when even that is refused, after making
// its parent so first. The worker may leave a directory that can be
// listed but not entered (0600): nothing below it can be opened, and git
// enters it as soon as anything makes it searchable (the removal of a
// FIFO in it does), to wait on what the walk could not reach.
func openDirMadeReadable(at int, name string, follow bool) (int, error) {
	if unix.Fchmodat(at, name, 0o700, 0) != nil && at != unix.AT_FDCWD {
		// The parent is at itself, or a directory below it that has not
		// changed since the last sweep.
		var err error
		if parent := filepath.Dir(name); parent == "." {
			err = unix.Fchmod(at, 0o700)
		} else {
			err = unix.Fchmodat(at, parent, 0o700, 0)
		}
		if err == nil {
			unix.Fchmodat(at, name, 0o700, 0)
		}
	}
	return openDir(at, name, follow)
}

// openDir opens the directory name in the directory at; a symlink in
// its place is followed only when follow says so.
func openDir(at int, name string, follow bool) (int, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	for {
		fd, err := unix.Openat(at, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// sweepSpecial removes the special files the worker left in its worktree,
// once its processes are gone, before zwarm's git reads the worktree:
// nothing of the worker's work goes with them. Each is removed through
// the worktree itself (os.Root), never by a path a symlink put in its
// place could lead out of it. It returns what it removed, one line each.
func (w *Worktree) sweepSpecial() ([]string, error) {
	root, err := os.OpenRoot(w.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	defer root.Close()
	var removed []string
	s := &sweeper{fix: true, f: func(p string, mode fs.FileMode) error {
		rel, err := filepath.Rel(w.Path, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			return nil
		}
		err = root.Remove(rel)
		if errors.Is(err, fs.ErrPermission) && root.Chmod(filepath.Dir(rel), 0o700) == nil {
			err = root.Remove(rel) // a directory the worker made read-only
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s, a %s the worker left in its worktree: %w", p, kind(mode), err)
		}
		removed = append(removed, fmt.Sprintf("removed %s (a %s the worker left in its worktree: git would wait on it, and cannot commit it)", p, kind(mode)))
		return nil
	}}
	w.remembering(s)
	if err = s.walk(w.Path); err == nil {
		w.keepSwept(s)
	}
	slices.Sort(removed) // the walk's order is the directories'
	return removed, err
}

// waitedOn is the error of a read of a running worker's worktree that did
// not end in workingLimit: the special files it holds are named, which
// git waits on and the turn's commit removes.
func (w *Worktree) waitedOn(err error) error {
	var special []string
	errStop := errors.New("enough")
	w.eachSpecial(false, func(p string, _ fs.FileMode) error {
		if special = append(special, p); len(special) == 5 {
			return errStop
		}
		return nil
	})
	if len(special) == 0 {
		return fmt.Errorf("reading the worktree %s took more than %s: %w", w.Path, workingLimit, err)
	}
	return fmt.Errorf("reading the worktree %s took more than %s: the worker made %s, which git waits on; the turn's commit removes them, and zwarm diff shows its work then",
		w.Path, workingLimit, strings.Join(special, ", "))
}

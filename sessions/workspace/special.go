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
//
// Each directory is opened from its parent's descriptor, never by its
// whole path, and never through a symlink: a turn's commit walks every
// directory of the worktree before git reads it, and resolving each
// path from the root again made the walk of a 20,000-file repository
// 20 ms where it is now 13 to 17 (BenchmarkSweepInRepo20000Files).
func (w *Worktree) eachSpecial(fix bool, f func(path string, mode fs.FileMode) error) error {
	var walk func(parent int, name, path string, follow bool) error
	walk = func(parent int, name, path string, follow bool) error {
		if len(path) >= unix.PathMax {
			// As a walk by whole paths ended, and as git's own does: each
			// level below holds a descriptor and a longer path.
			return &fs.PathError{Op: "open", Path: path, Err: syscall.ENAMETOOLONG}
		}
		fd, err := openDir(parent, name, follow)
		if errors.Is(err, unix.EACCES) && fix {
			fd, err = openDirMadeReadable(parent, name, follow)
		}
		if err != nil {
			return unlessUnread(err, &fs.PathError{Op: "open", Path: path, Err: err})
		}
		// Kept open while the walk is below it: its entries are opened
		// from it.
		dir := os.NewFile(uintptr(fd), path)
		defer dir.Close()
		ents, err := dir.ReadDir(-1)
		if err != nil {
			return unlessUnread(err, err)
		}
		for _, d := range ents {
			switch {
			case d.IsDir():
				if err := walk(fd, d.Name(), filepath.Join(path, d.Name()), false); err != nil {
					return err
				}
			case d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0:
			default:
				if err := f(filepath.Join(path, d.Name()), d.Type()); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(unix.AT_FDCWD, w.Path, w.Path, true)
}

// unlessUnread is nil for err that says the directory is gone meanwhile,
// not to be read, or no directory now; wrapped otherwise.
func unlessUnread(err, wrapped error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) {
		return nil
	}
	return wrapped
}

// openDirMadeReadable opens the directory name in parent after making it
// readable and searchable (0700); when even that is refused, after making
// parent so first. The worker may leave a directory that can be listed but
// not entered (0600): nothing below it can be opened, and git enters it
// as soon as anything makes it searchable (the removal of a FIFO in it
// does), to wait on what the walk could not reach.
func openDirMadeReadable(parent int, name string, follow bool) (int, error) {
	if unix.Fchmodat(parent, name, 0o700, 0) != nil && parent != unix.AT_FDCWD && unix.Fchmod(parent, 0o700) == nil {
		unix.Fchmodat(parent, name, 0o700, 0)
	}
	return openDir(parent, name, follow)
}

// openDir opens the directory name in the directory parent; a symlink in
// its place is followed only when follow says so.
func openDir(parent int, name string, follow bool) (int, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	for {
		fd, err := unix.Openat(parent, name, flags, 0)
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
	err = w.eachSpecial(true, func(p string, mode fs.FileMode) error {
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
	})
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

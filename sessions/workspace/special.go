package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
	var walk func(dir string) error
	walk = func(dir string) error {
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrPermission) && fix && os.Chmod(dir, 0o700) == nil {
			ents, err = os.ReadDir(dir)
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOTDIR) {
				return nil // gone meanwhile, or not to be read
			}
			return err
		}
		for _, d := range ents {
			p := filepath.Join(dir, d.Name())
			switch {
			case d.IsDir():
				if err := walk(p); err != nil {
					return err
				}
			case d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0:
			default:
				if err := f(p, d.Type()); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(w.Path)
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

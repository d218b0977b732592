package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// git opens .gitattributes and each directory's .gitignore by name, and
// would wait on a FIFO the worker made there for good: a turn's commit,
// then every diff, landing and removal after it, and whoever asked with
// them. A FIFO, socket or device in a tracked file's place makes git
// refuse the whole turn. None of them can be committed.

// eachSpecial calls f for every FIFO, socket and device in the worktree.
// Git dirs (a .git anywhere) are not entered: what is in the worktree's
// own is pin's.
func (w *Worktree) eachSpecial(f func(path string, mode fs.FileMode) error) error {
	return filepath.WalkDir(w.Path, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return nil // gone meanwhile, or not to be read: git will say
			}
			return err
		case d.Name() == ".git" && p != w.Path:
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		case d.IsDir() || d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0:
			return nil
		}
		return f(p, d.Type())
	})
}

// sweepSpecial removes the special files the worker left in its worktree,
// once its processes are gone, before zwarm's git reads the worktree:
// nothing of the worker's work goes with them. It returns what it
// removed, one line each.
func (w *Worktree) sweepSpecial() ([]string, error) {
	var removed []string
	err := w.eachSpecial(func(p string, mode fs.FileMode) error {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
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
	w.eachSpecial(func(p string, _ fs.FileMode) error {
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

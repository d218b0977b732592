package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A worker's own git must write a few parts of the repository's git dir
// (WritableGitDirs): the worktree's git dir, the objects and the zwarm
// branches with their logs. What it leaves there is read by zwarm's git,
// which runs outside any sandbox, so none of it may steer where zwarm's
// git writes:
//
//   - a symlink (git never makes one in a git dir): git opens reflogs,
//     COMMIT_EDITMSG, MERGE_MSG and their kin through it, and would write
//     to whatever file of yours it points at;
//   - a FIFO or a device, which would hang or feed whoever opens it;
//   - the worker's branch made a symbolic ref ("ref: refs/heads/main"):
//     every commit zwarm makes on the branch would move the branch it
//     names instead.
//
// pin clears all three before zwarm's git writes in the worktree. The
// worker has stopped by then (a turn's commit follows the sweep of its
// processes; landing and updating claim a settled session), so nothing
// puts them back meanwhile.

// pin makes the worktree safe for zwarm's git to write in: what the
// worker planted in its writable parts of the git dir is removed, and its
// branch is made a plain ref again, at Known, if the worker made it a
// symbolic one. It returns what it undid, one line each, for the log.
func (w *Worktree) pin(ctx context.Context) ([]string, error) {
	var undone []string
	roots := []string{w.admin(), filepath.Join(w.own(), "refs", "heads", "zwarm"), filepath.Join(w.own(), "logs", "refs", "heads", "zwarm")}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() || d.Type().IsRegular() {
				return nil
			}
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove %s, which the worker made and zwarm's git would write through: %w", p, err)
			}
			undone = append(undone, fmt.Sprintf("removed %s (a %s in the git dir, made by the worker)", p, kind(d.Type())))
			return nil
		})
		if err != nil {
			return undone, err
		}
	}
	ref := "refs/heads/" + w.Branch
	b, err := os.ReadFile(filepath.Join(w.own(), filepath.FromSlash(ref)))
	if errors.Is(err, fs.ErrNotExist) && w.Known != "" {
		// Deleted by the worker (its dir is writable to it), unless it
		// is packed: made again where zwarm last knew it.
		g := w.ownRepo()
		g.writes = true
		if _, err := g.run(ctx, "update-ref", "--no-deref", "-m", "zwarm: the worker deleted its branch; put back", ref, w.Known, ""); err == nil {
			undone = append(undone, fmt.Sprintf("made %s again at %s: the worker had deleted it", w.Branch, Abbrev(w.Known)))
		}
		return undone, nil
	}
	if err != nil || !strings.HasPrefix(string(b), "ref:") {
		return undone, nil // a plain ref, a packed one, or none
	}
	target := strings.TrimSpace(strings.TrimPrefix(string(b), "ref:"))
	g := w.ownRepo()
	g.writes = true
	if w.Known == "" {
		if _, err := g.run(ctx, "update-ref", "--no-deref", "-d", ref); err != nil {
			return undone, fmt.Errorf("undo the worker's making %s a symbolic ref to %s: %w", w.Branch, target, err)
		}
		return append(undone, fmt.Sprintf("removed %s, which the worker had made a symbolic ref to %s", w.Branch, target)), nil
	}
	if _, err := g.run(ctx, "update-ref", "--no-deref", "-m", "zwarm: the worker made its branch a symbolic ref to "+target+"; put back", ref, w.Known); err != nil {
		return undone, fmt.Errorf("undo the worker's making %s a symbolic ref to %s: %w", w.Branch, target, err)
	}
	return append(undone, fmt.Sprintf("put %s back at %s: the worker had made it a symbolic ref to %s", w.Branch, Abbrev(w.Known), target)), nil
}

// pinned is pin for a write: what it undid is kept in w.Undone.
func (w *Worktree) pinned(ctx context.Context) error {
	undone, err := w.pin(ctx)
	w.Undone = append(w.Undone, undone...)
	return err
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
//     names instead;
//   - the worktree's commondir (in its git dir) naming a repository of
//     the worker's making: git, zwarm's included, reads the branches
//     there, and a person's git its config too (a filter, an fsmonitor:
//     commands run outside the sandbox);
//   - the objects' alternates naming other objects than yours.
//
// pin undoes all of them before zwarm's git writes in the worktree. The
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
	if w.OwnDir != "" {
		// The worker writes its own objects: zwarm's git writes there too
		// (a turn's commit), through whatever is planted.
		roots = append(roots, filepath.Join(w.OwnDir, "objects"))
	}
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
	pointers, err := w.pinPointers()
	undone = append(undone, pointers...)
	if err != nil {
		return undone, err
	}
	ref := "refs/heads/" + w.Branch
	path := filepath.Join(w.own(), filepath.FromSlash(ref))
	b, err := os.ReadFile(path)
	if errors.Is(err, syscall.EISDIR) {
		// A directory in its place (the worker deleted the branch and
		// made it, refs of its own in it or none): git could make
		// neither the branch nor a commit on it.
		moved, rerr := w.removeRefsIn(ctx, ref, path)
		undone = append(undone, moved...)
		if rerr == nil {
			err = fs.ErrNotExist
		}
	}
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

// removeRefsIn removes the directory at path, which the worker made in
// its branch's place (ref), with the refs it made in it: they are its
// own repository's (each is said, with its commit), and the branch is
// made again where zwarm last knew it.
func (w *Worktree) removeRefsIn(ctx context.Context, ref, path string) ([]string, error) {
	var said []string
	if !emptyTree(path) {
		g := w.ownRepo()
		out, err := g.run(ctx, "for-each-ref", "--format=%(objectname) %(refname)", ref+"/")
		if err != nil {
			return nil, err
		}
		g.writes = true
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			commit, name, ok := strings.Cut(line, " ")
			if !ok {
				continue
			}
			if _, err := g.run(ctx, "update-ref", "--no-deref", "-d", name); err != nil {
				return said, fmt.Errorf("remove %s, which the worker made where its branch %s was: %w", name, w.Branch, err)
			}
			said = append(said, fmt.Sprintf("removed %s (at %s), which the worker had made where its branch %s was", name, Abbrev(commit), w.Branch))
		}
	}
	if err := os.RemoveAll(path); err != nil {
		return said, err
	}
	return append(said, fmt.Sprintf("removed the directory %s, which the worker had made in %s's place", path, w.Branch)), nil
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

// pinPointers puts back the files by which git finds the worktree's
// repository and objects, where the worker changed them: the worktree's
// commondir, and the alternates of the worker's repository (which borrow
// your objects). Each is written as zwarm made it.
func (w *Worktree) pinPointers() ([]string, error) {
	if w.OwnDir == "" || filepath.Dir(w.admin()) != filepath.Join(w.OwnDir, "worktrees") {
		return nil, nil // a worktree of your repository's own (older), or git dirs zwarm did not lay out
	}
	var want []struct{ path, body string }
	if fi, err := os.Lstat(filepath.Join(w.OwnDir, "objects")); err == nil && fi.IsDir() {
		// (None when the worker's repository is gone: removed, or to be
		// made again.) Its info dir, if the worker removed it, too.
		if err := os.MkdirAll(filepath.Join(w.OwnDir, "objects", "info"), 0o755); err != nil {
			return nil, err
		}
		want = append(want, struct{ path, body string }{filepath.Join(w.OwnDir, "objects", "info", "alternates"), filepath.Join(w.CommonDir, "objects") + "\n"})
	}
	if _, err := os.Lstat(w.admin()); err == nil {
		// (A git dir the worker deleted is made again by restoreAdmin,
		// as zwarm made it.)
		want = append(want, struct{ path, body string }{filepath.Join(w.admin(), "commondir"), "../..\n"})
	}
	var undone []string
	for _, f := range want {
		// Read without following: the sweep removed what is no regular
		// file, so a symlink here is one put back meanwhile.
		b, err := readPlainSmall(f.path)
		if err == nil && b == f.body {
			continue
		}
		if rerr := os.Remove(f.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return undone, fmt.Errorf("put back %s, which the worker changed: %w", f.path, rerr)
		}
		if werr := os.WriteFile(f.path, []byte(f.body), 0o644); werr != nil {
			return undone, fmt.Errorf("put back %s, which the worker changed: %w", f.path, werr)
		}
		undone = append(undone, fmt.Sprintf("put back %s: the worker had changed it", f.path))
	}
	return undone, nil
}

// readPlainSmall is a small regular file's content, without following a
// symlink or waiting on a FIFO; anything else is an error.
func readPlainSmall(path string) (string, error) {
	f, _, err := openPlain(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	return string(b), err
}

// emptyTree says whether the directory at path holds directories alone.
func emptyTree(path string) bool {
	empty := true
	filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			empty = false
			return fs.SkipAll
		}
		return nil
	})
	return empty
}

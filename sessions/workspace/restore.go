package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// restoreAdmin makes the worktree's own git dir again when its worker
// deleted it (rm -rf "$(git rev-parse --git-dir)": it is writable to the
// worker, which needs it to commit) while the worktree's files are still
// there: without it zwarm's git could not see the files, diff would show
// nothing and a removal would take them with it. It is made as git worktree
// add makes it (HEAD on the worker's branch, the index of the branch's
// tree), so what the files hold beyond the branch shows as uncommitted.
// It reports whether it had to.
func (w *Worktree) restoreAdmin(ctx context.Context) (bool, error) {
	admin := w.admin()
	if _, err := os.Stat(filepath.Join(admin, "HEAD")); err == nil {
		return false, nil
	}
	if fi, err := os.Lstat(w.Path); err != nil || !fi.IsDir() {
		return false, nil // the worktree is gone: nothing to see
	}
	if _, err := w.ownRepo().run(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+w.Branch); err != nil {
		return false, nil // no branch to put it on: pin makes it first, if zwarm knows where
	}
	if filepath.Dir(admin) != filepath.Join(w.own(), "worktrees") {
		return false, fmt.Errorf("the worktree's git dir %s is gone and is not one zwarm can make again", admin)
	}
	if err := os.RemoveAll(admin); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := os.MkdirAll(admin, 0o755); err != nil {
		return false, fmt.Errorf("make the worktree's git dir again: %w", err)
	}
	files := map[string]string{
		"HEAD":      "ref: refs/heads/" + w.Branch + "\n",
		"commondir": "../..\n",
		"gitdir":    filepath.Join(w.Path, ".git") + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(admin, name), []byte(body), 0o644); err != nil {
			return false, fmt.Errorf("make the worktree's git dir again: %w", err)
		}
	}
	g := w.tree()
	g.writes = true
	if _, err := g.run(ctx, "read-tree", "refs/heads/"+w.Branch); err != nil {
		return false, fmt.Errorf("make the worktree's index again: %w", err)
	}
	w.repairPointer()
	w.Undone = append(w.Undone, fmt.Sprintf("made the worktree's git dir %s again: the worker had deleted it", admin))
	return true, nil
}

// Restore makes what the worker deleted of its worktree's git again
// (its branch, where Known says; the worktree's own git dir), so that
// its files are seen, diffed and committed, never taken for gone; and
// removes what it left in the worktree that git would wait on
// (sweepSpecial). The worker has stopped.
func (w *Worktree) Restore(ctx context.Context) error {
	if err := w.restoreGit(ctx); err != nil {
		return err
	}
	swept, err := w.sweepSpecial()
	w.Undone = append(w.Undone, swept...)
	return err
}

// restoreGit is Restore but the sweep: what is made again and undone in
// the git dirs, which zwarm's git may read once it is done.
func (w *Worktree) restoreGit(ctx context.Context) error {
	// Its sweep removes what is no file nor directory in the git dirs:
	// never in a worktree zwarm did not make (ownedBy).
	if err := w.ownedBy(w.Owner); err != nil {
		return err
	}
	if err := w.pinned(ctx); err != nil {
		return err
	}
	_, err := w.restoreAdmin(ctx)
	return err
}

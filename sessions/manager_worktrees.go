package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// ErrUnlanded is returned (wrapped) by Remove and reported by Clean for a
// session whose worktree holds work that was never landed.
var ErrUnlanded = workspace.ErrUnlanded

// UnlandedError is a removal refused because it would drop a worker's
// work (workspace.Unlanded).
type UnlandedError = workspace.Unlanded

// unlanded is the work a settled session's worktree holds never landed.
func (m *Manager) unlanded(ctx context.Context, s *record.Session) (*UnlandedError, error) {
	ws := s.Workspace
	if ws == nil || ws.Preparing() || s.Turn == 0 {
		return nil, nil // no turn ran: nothing in it is a worker's
	}
	w := m.st.Worktree(ws)
	e := &UnlandedError{ID: s.ID, Branch: ws.Branch, Stat: ws.Changes, Path: ws.Path, ByHand: s.AllCommitted()}
	// A worktree whose git dir someone deleted still holds files: they
	// are looked at, never taken for gone with the git dir.
	if err := w.Restore(ctx); err != nil {
		return nil, fmt.Errorf("look at %s's worktree: %w", record.ShortID(s.ID), err)
	}
	if w.Exists() {
		dirty, err := w.Dirty(ctx)
		if err != nil {
			return nil, fmt.Errorf("look at %s's worktree: %w", record.ShortID(s.ID), err)
		}
		e.Uncommitted, e.Nested = len(dirty), w.NestedAmong(dirty)
	}
	// The branch as it is now: commits made on it by hand since the
	// last turn are work too, and one moved off the recorded head has
	// the recorded head's commits to lose as well as its own.
	head, diverged := ws.BranchHead(ctx)
	if !(ws.LandedNow() && head == ws.Head) && head != "" && workspace.CommitExists(ctx, ws.GitDir, head) {
		n, err := w.Count(ctx, ws.DiffBaseFor(head), head)
		if err != nil {
			return nil, fmt.Errorf("count %s's commits: %w", record.ShortID(s.ID), err)
		}
		e.Commits = n
	}
	tip := w.Tip(ctx)
	if diverged && tip != "" {
		n, err := w.Count(ctx, ws.Head, tip)
		if err != nil {
			return nil, fmt.Errorf("count %s's commits: %w", record.ShortID(s.ID), err)
		}
		e.Commits += n
	}
	var err error
	if e.ResetAway, err = s.ResetAway(ctx, head, tip); err != nil {
		return nil, fmt.Errorf("look at %s's turns: %w", record.ShortID(s.ID), err)
	}
	if e.Commits == 0 && e.Uncommitted == 0 && len(e.ResetAway) == 0 {
		return nil, nil
	}
	return e, nil
}

// dropWorkspace removes a settled session's worktree and branch; unless
// force, not work never landed (an *UnlandedError), nor what zwarm did not
// make (with force, it warns and leaves it).
func (m *Manager) dropWorkspace(ctx context.Context, s *record.Session, force bool) error {
	ws := s.Workspace
	if ws == nil || s.Legacy {
		return nil
	}
	if !force {
		u, err := m.unlanded(ctx, s)
		if err != nil {
			return err
		}
		if u != nil {
			return u
		}
	}
	w := m.st.Worktree(ws)
	_, ownErr := os.Lstat(w.OwnDir)
	if _, err := os.Lstat(w.Path); err != nil && (w.OwnDir == "" || ownErr != nil) {
		if _, err := workspace.ResolveCommit(ctx, ws.GitDir, "refs/heads/"+ws.Branch); err != nil {
			// Neither the worktree nor its branch is there (its making failed
			// before git made them, or they are gone): nothing to remove. The
			// lock would make the worktrees dir first, which one that cannot
			// be made (the [worktrees] dir that failed it) refuses for good.
			workspace.RemoveSidecars(w.Path)
			return nil
		}
	}
	switch err := w.Remove(ctx, false); {
	case errors.Is(err, workspace.ErrNotMade) && force: // the record goes, what it names stays
		m.warn(fmt.Errorf("%s: %w", record.ShortID(s.ID), err))
	case err != nil:
		return fmt.Errorf("remove %s's worktree: %w", record.ShortID(s.ID), err)
	}
	return nil
}

// Leftover is a worktree zwarm made whose session is gone.
type Leftover = workspace.Leftover

// Leftovers lists the worktrees zwarm made for the repository dir is in
// whose session this state dir no longer has, with their disk use.
func (m *Manager) Leftovers(ctx context.Context, dir string) ([]Leftover, error) {
	repo, root, err := m.repoAndRoot(ctx, dir)
	if err != nil || repo == nil {
		return nil, err
	}
	ids, err := m.st.Ids()
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(ids))
	for _, id := range ids {
		known[id] = true
	}
	return workspace.Leftovers(ctx, repo.CommonDir, repo.WorktreesRoot(root), func(id, owner string) bool {
		if known[id] {
			return true
		}
		// A worktree of another state dir's session (made from a
		// subdirectory's .zwarm, or with --state-dir) is that one's.
		if owner != "" && owner != m.st.Dir() {
			_, err := os.Stat(filepath.Join(owner, "sessions", id))
			return err == nil
		}
		return false
	})
}

// CleanLeftovers removes the worktrees Leftovers lists. A leftover's
// branch goes too if every commit on it is on another branch (or force);
// otherwise it is kept, and reported, so no work is lost with the disk
// space.
func (m *Manager) CleanLeftovers(ctx context.Context, dir string, force bool) (removed []Leftover, keptBranches []Leftover, err error) {
	left, err := m.Leftovers(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	repo, _, err := m.repoAndRoot(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := m.Config()
	if err != nil {
		return nil, nil, err
	}
	include, err := workspace.ReadIncludeFile(repo.Top)
	if err != nil {
		return nil, nil, err
	}
	bring := append(append(append([]string(nil), cfg.Worktrees.Copy...), cfg.Worktrees.Symlink...), include...)
	for _, l := range left {
		keep, err := workspace.RemoveLeftover(ctx, repo, &l, bring, force)
		if err != nil {
			return removed, keptBranches, err
		}
		removed = append(removed, l)
		if keep {
			keptBranches = append(keptBranches, l)
		}
	}
	return removed, keptBranches, nil
}

// repoAndRoot is the repository dir is in (nil outside one) and where
// its worktrees go.
func (m *Manager) repoAndRoot(ctx context.Context, dir string) (*workspace.Repo, string, error) {
	if dir == "" {
		dir, _ = os.Getwd()
	}
	repo, err := workspace.Find(ctx, dir)
	if errors.Is(err, workspace.ErrNotRepo) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	cfg, err := m.Config()
	if err != nil {
		return nil, "", err
	}
	root, err := cfg.Worktrees.Root()
	return repo, root, err
}

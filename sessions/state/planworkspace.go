package state

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// ErrCannotRun marks a request this machine cannot carry out as it is set
// up (an agent's binary is missing, git cannot run): nothing was recorded
// or started.
var ErrCannotRun = errors.New("cannot run")

// WorkspaceRequest is what a spawn asks of its worker's workspace.
type WorkspaceRequest struct {
	// Isolation is config.IsolationWorktree or IsolationNone ("": the
	// [worktrees] table's, else a worktree in a repository).
	Isolation string
	// Base is what the worktree starts from ("": HEAD); WithChanges
	// starts it from HEAD with the uncommitted changes on it.
	Base        string
	WithChanges bool
}

// PlanWorkspace decides where a new session's agent works. In a git
// repository the default is a worktree of its own, made from the caller's
// HEAD (or req.Base) by the supervisor; everything that could make that
// fail in a way the caller can correct (no repository where one was asked
// for, a base that is no commit) is checked here, before anything is
// recorded. Isolation never falls back to working in place: a repository
// git cannot read is an error, not "no repository".
func PlanWorkspace(ctx context.Context, cfg *config.Config, req WorkspaceRequest, dir, id string) (*record.Workspace, error) {
	iso := FirstNonBlank(req.Isolation, cfg.Worktrees.Isolation, config.IsolationWorktree)
	switch iso {
	case config.IsolationWorktree, config.IsolationNone:
	default:
		return nil, config.Invalidf("isolation %q: want %q or %q", iso, config.IsolationWorktree, config.IsolationNone)
	}
	if iso == config.IsolationNone {
		if req.Base != "" || req.WithChanges {
			return nil, config.Invalidf("a base and --with-changes need a worktree: they cannot go with working in place")
		}
		return nil, nil
	}
	root, err := cfg.Worktrees.Root()
	if err != nil {
		return nil, &config.Error{Path: "config.toml", Err: err}
	}
	if id, ok := workspace.WorkerOf(root, dir); ok {
		// Its git dir is the worker's to write: git there would run what
		// the worker put in it, outside any sandbox.
		return nil, config.Invalidf("%s is in the worktree of worker %s, a repository zwarm does not take for yours: spawn from your own checkout (--base %s starts from that worker's work)",
			dir, record.ShortID(id), workspace.BranchFor(id))
	}
	repo, err := workspace.Find(ctx, dir)
	switch {
	case errors.Is(err, workspace.ErrNotRepo):
		if req.Isolation == config.IsolationWorktree || req.Base != "" || req.WithChanges {
			return nil, config.Invalidf("%s is %v: a worktree needs one (run it in a repository, or work in place)", dir, config.ErrNoRepo)
		}
		return nil, nil // outside a repository, a worker works in place
	case errors.Is(err, workspace.ErrNoGit):
		return nil, fmt.Errorf("%w: %v", ErrCannotRun, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrCannotRun, err)
	}
	if req.WithChanges && req.Base != "" {
		return nil, config.Invalidf("--with-changes starts from HEAD and the uncommitted changes on it: it cannot go with a base")
	}
	base, err := repo.ResolveBase(ctx, req.Base)
	if err != nil {
		return nil, config.Invalidf("%v", err)
	}
	ws := &record.Workspace{
		Repo: repo.Main(), GitDir: repo.CommonDir, Origin: repo.Top, Subdir: repo.Prefix,
		Path: filepath.Join(repo.WorktreesRoot(root), id), Branch: workspace.BranchFor(id),
		Base: base.Name, BaseBranch: base.Branch, BaseCommit: base.Commit, State: record.WorkspaceNew,
	}
	if req.WithChanges {
		snap, err := repo.Snapshot(ctx, base.Commit)
		if err != nil {
			return nil, err
		}
		ws.BaseCommit, ws.WithChanges = snap, true
	}
	ws.Head = ws.BaseCommit
	return ws, nil
}

package sessions

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// UpdateResult is what Update did.
type UpdateResult struct {
	Session *record.Session
	// From is the branch merged in, at Commit.
	From, Commit string
	// UpToDate: the worker's branch had all of it already.
	UpToDate bool
	// Conflict lists the files that conflict; FollowUp is the follow-up
	// that asked the worker to resolve them.
	Conflict []string
	FollowUp *InjectResult
}

// Update merges the new commits of a settled session's base branch (or
// from, any branch or commit) into its worker's branch, in its worktree,
// so that its change lands without conflict. If the merge conflicts, the
// worktree is left mid-merge with the conflict markers, and the worker is
// sent a follow-up naming the files to resolve; the commit at the end of
// that turn concludes the merge.
func (m *Manager) Update(ctx context.Context, idOrPrefix, from string) (*UpdateResult, error) {
	if err := m.trusted(); err != nil { // it runs git, with the settings
		return nil, err
	}
	s, err := m.Get(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	id := s.ID
	if _, err := workspaceOf(s); err != nil {
		return nil, err
	}
	s, claimed, err := m.claimWorktree(ctx, id, "update")
	if err != nil {
		return nil, err
	}
	ws := s.Workspace
	// The claim ends with the update, or before the follow-up that hands
	// the worker a conflict (which starts the worker in the worktree).
	released := false
	release := func() {
		if !released {
			released = true
			claimed()
		}
	}
	defer release()
	w := ws.Worktree()
	if ws.Preparing() || ws.State == record.WorkspaceFailed || !w.Exists() {
		return nil, fmt.Errorf("update %s: it has no worktree (%s): nothing to update", record.ShortID(id), ws.State)
	}
	if from == "" {
		if !ws.BaseBranch {
			return nil, config.Invalidf("update %s: it started from %s, a commit, not a branch: name the branch to merge with --from", record.ShortID(id), workspace.Abbrev(ws.Base))
		}
		from = ws.Base
	}
	tip, err := workspace.ResolveCommit(ctx, ws.GitDir, from)
	if err != nil {
		return nil, config.Invalidf("update %s: %v", record.ShortID(id), err)
	}
	if !s.AllCommitted() {
		if s, err = m.commitLeftovers(ctx, s); err != nil {
			return nil, fmt.Errorf("update %s: %w", record.ShortID(id), err)
		}
	}
	ws = s.Workspace
	res := &UpdateResult{Session: s, From: from, Commit: tip}
	if workspace.IsAncestor(ctx, ws.GitDir, tip, ws.Head) {
		res.UpToDate = true
		return res, nil
	}
	msg := fmt.Sprintf("zwarm %s: merge %s into %s", record.ShortID(id), from, ws.Branch)
	head, err := w.MergeFrom(ctx, tip, msg)
	var ce *workspace.ConflictError
	switch {
	case errors.As(err, &ce):
		return m.handConflict(ctx, res, ce.Files, release)
	case err != nil:
		return nil, fmt.Errorf("update %s: %w", record.ShortID(id), err)
	}
	_, stat, err := w.Changes(ctx, tip, head)
	if err != nil {
		return nil, err
	}
	s, err = m.recordWorkspace(id, func(ws *record.Workspace) {
		ws.BaseCommit, ws.Head, ws.Changes, ws.Conflict = tip, head, &stat, nil
	})
	res.Session = s
	return res, err
}

// handConflict records that merging res.From into the worker's branch
// conflicts in files, and asks the worker to resolve them in a follow-up,
// sent once the update's claim is released (the follow-up starts the
// worker in the worktree).
func (m *Manager) handConflict(ctx context.Context, res *UpdateResult, files []string, release func()) (*UpdateResult, error) {
	id, tip := res.Session.ID, res.Commit
	res.Conflict = files
	s, err := m.recordWorkspace(id, func(ws *record.Workspace) { ws.BaseCommit, ws.Conflict = tip, files })
	if err != nil {
		return nil, err
	}
	res.Session = s
	release()
	res.FollowUp, err = m.Inject(ctx, id, workspace.ConflictFollowUp(res.From, tip, files))
	if err != nil {
		return res, fmt.Errorf("update %s: the merge conflicts in %s, and the follow-up asking the worker to resolve them could not be sent: %w",
			record.ShortID(id), strings.Join(files, ", "), err)
	}
	res.Session = res.FollowUp.Session
	return res, nil
}

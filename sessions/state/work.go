package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// CommitWork commits what was left in the session's worktree (ws, ready)
// with message msg, and measures the change: the supervisor at the end of
// each turn, and zwarm attach once the person has left the agent's CLI,
// so that a landing takes all of it. what names the work in an error
// ("turn 3's work"). It returns nil for a worktree that is not ready, and
// a TurnWork whose Err says why when nothing could be committed (a merge
// or rebase left halfway stays in the worktree, uncommitted, until it is
// finished; land refuses it meanwhile).
func CommitWork(ctx context.Context, ws *record.Workspace, msg, what string) *TurnWork {
	if ws == nil || ws.State != record.WorkspaceReady {
		return nil
	}
	w := ws.Worktree()
	head, _, err := commitRetrying(ctx, w, msg)
	var ue *workspace.UnfinishedError
	if errors.As(err, &ue) {
		return &TurnWork{Err: fmt.Sprintf("%s is not committed: %v", what, err), Conflict: ue.Files, Undone: w.Undone}
	}
	if err != nil {
		return &TurnWork{Err: fmt.Sprintf("%s is not committed: %v", what, err), Undone: w.Undone}
	}
	before := ws.Head
	if before == "" {
		before = ws.BaseCommit
	}
	work := &TurnWork{Head: head, From: before, Undone: w.Undone}
	if head != before {
		work.Commit = head
		// Without the list the commit still stands; the record just names
		// no files for it.
		files, _, _ := w.Changes(ctx, before, head)
		for _, f := range files {
			work.Files = append(work.Files, f.Path)
		}
	}
	if _, stat, err := w.Changes(ctx, ws.DiffBaseFor(head), head); err == nil {
		work.Changes = &stat
	}
	if len(ws.Conflict) > 0 {
		work.Conflict = w.WithMarkers(ws.Conflict)
	}
	return work
}

// commitRetrying commits the work, trying again for a little while when
// git's index is locked: a person running git in the worktree as the turn
// ends holds it for a moment.
func commitRetrying(ctx context.Context, w *workspace.Worktree, msg string) (string, bool, error) {
	for wait := 50 * time.Millisecond; ; wait *= 2 {
		head, made, err := w.Commit(ctx, msg)
		if err == nil || !strings.Contains(err.Error(), "index.lock") || wait > 2*time.Second {
			return head, made, err
		}
		select {
		case <-ctx.Done():
			return head, made, err
		case <-time.After(wait):
		}
	}
}

package sessions

import (
	"context"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// branchHead is where a settled session's change ends now, the one
// answer diff, land (dry or not) and rm act on: the worker's branch as it
// is, when it holds the head zwarm recorded at the last turn's end and
// more (commits someone made on it by hand since, which are part of the
// change), else the recorded head. diverged says the branch was moved
// off the recorded head (reset or amended by hand): a landing refuses
// rather than guess which of the two is the change, and a removal counts
// the commits only the recorded head has.
func branchHead(ctx context.Context, ws *record.Workspace) (head string, diverged bool) {
	recorded := ws.Head
	if recorded == "" {
		recorded = ws.BaseCommit
	}
	tip := ws.Worktree().Tip(ctx)
	switch {
	case tip == "" || tip == recorded:
		return ws.Head, false
	case workspace.IsAncestor(ctx, ws.GitDir, recorded, tip):
		return tip, false
	}
	return ws.Head, true
}

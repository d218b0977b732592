package state

import (
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// Worktree is a session's worktree as its record names it, to be removed
// only if it is this state dir's (workspace.Worktree.Owner).
func (st *Store) Worktree(ws *record.Workspace) *workspace.Worktree {
	w := ws.Worktree()
	w.Owner = st.Dir()
	return w
}

package state

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// foreignWorktree says why a record's worktree is not one zwarm makes for
// its session, "" if it is. zwarm names them all the same way (a
// directory named after the session, its worker's repository beside it as
// <dir>.git, on branch zwarm/<id>), and removes what a record names: a
// record changed by hand, or by a worker that could write it, must not
// make rm delete a directory of the user's, or a branch of theirs.
func foreignWorktree(s *record.Session) string {
	ws := s.Workspace
	if ws == nil {
		return ""
	}
	if ws.Path != "" && (!filepath.IsAbs(ws.Path) || filepath.Clean(ws.Path) != ws.Path || filepath.Base(ws.Path) != s.ID) {
		return fmt.Sprintf("its worktree %q is not a directory zwarm makes for it (…/%s)", ws.Path, s.ID)
	}
	if ws.OwnGitDir != "" && ws.OwnGitDir != workspace.OwnRepoFor(ws.Path) {
		return fmt.Sprintf("its worker's repository %q is not the one zwarm makes beside its worktree (%s)", ws.OwnGitDir, workspace.OwnRepoFor(ws.Path))
	}
	// The worktree's own git dir is git's, in the worktrees dir of the
	// repository it belongs to; zwarm removes what a worker plants in it.
	// git names it after the worktree (with a number after, should the
	// name be taken): <repository>/worktrees/<id>[N], nothing else.
	if own := cmp.Or(ws.OwnGitDir, ws.GitDir); ws.AdminDir != "" && (filepath.Clean(ws.AdminDir) != ws.AdminDir ||
		filepath.Dir(ws.AdminDir) != filepath.Join(own, "worktrees") || !strings.HasPrefix(filepath.Base(ws.AdminDir), s.ID)) {
		return fmt.Sprintf("its worktree's git dir %q is not the one git makes for it in %s", ws.AdminDir, filepath.Join(own, "worktrees"))
	}
	if ws.Branch != "" && ws.Branch != workspace.BranchFor(s.ID) {
		return fmt.Sprintf("its branch %q is not the one zwarm makes for it (%s)", ws.Branch, workspace.BranchFor(s.ID))
	}
	return ""
}

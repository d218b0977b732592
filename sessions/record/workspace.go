package record

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// WorkspaceState is where a session's worktree is in its life.
type WorkspaceState string

const (
	// WorkspaceNew: recorded by spawn; the supervisor makes it.
	WorkspaceNew WorkspaceState = "new"
	// WorkspacePreparing: the supervisor is making it (git worktree add,
	// what is brought along, the setup command).
	WorkspacePreparing WorkspaceState = "preparing"
	// WorkspaceReady: the agent works in it.
	WorkspaceReady WorkspaceState = "ready"
	// WorkspaceFailed: it could not be made; Error says why (NeverMade:
	// the session ended first).
	WorkspaceFailed WorkspaceState = "failed"
	// WorkspaceRemoved: landed and removed (a follow-up makes it again).
	WorkspaceRemoved WorkspaceState = "removed"
)

// NeverMade is the Error of the worktree of a session that ended before
// it was made (killed while its job was queued, say).
const NeverMade = "the session ended before its worktree was made"

// Workspace is a session's git worktree: where its agent works, on a
// branch of its own, and what became of that work. A session without one
// works in place, in the directory it was started from.
type Workspace struct {
	// Repo is the repository's main checkout; GitDir its git dir, shared
	// by every worktree.
	Repo   string `json:"repo"`
	GitDir string `json:"git_dir"`
	// Origin is the checkout the session was spawned from: what copy and
	// symlink bring things from, and its top-level directory.
	Origin string `json:"origin"`
	// Path is the worktree; the agent works in its Subdir, the directory
	// of the checkout the session was spawned from.
	Path   string `json:"path"`
	Subdir string `json:"subdir,omitempty"`
	// AdminDir is the worktree's own git dir, as git made it: zwarm's git
	// runs there pinned to it, never to what the worktree's .git says.
	AdminDir string `json:"admin_dir,omitempty"`
	// OwnGitDir is the git dir of the repository made for the worker,
	// which the worktree belongs to; "" for a worktree of the repository
	// itself (made before workers had repositories of their own).
	OwnGitDir string `json:"own_git_dir,omitempty"`
	Branch    string `json:"branch"`
	// Base is what the worker started from, as it was named (a branch,
	// or a commit); BaseBranch says it is a branch, which update merges
	// from. BaseCommit is the commit its changes are measured from (it
	// moves when update merges the base's new commits in).
	Base        string `json:"base"`
	BaseBranch  bool   `json:"base_branch,omitempty"`
	BaseCommit  string `json:"base_commit"`
	WithChanges bool   `json:"with_changes,omitempty"`

	State WorkspaceState `json:"state"`
	// Brought are the paths copied or linked into the worktree; they are
	// never committed.
	Brought []string `json:"brought,omitempty"`
	// Head is the worktree's commit at the last turn's end (zwarm commits
	// what the worker left), Changes the change from the base to it.
	Head    string          `json:"head,omitempty"`
	Changes *workspace.Stat `json:"changes,omitempty"`
	// Committed is the last turn whose work zwarm committed when it ended.
	// A settled session whose every turn is committed has nothing in its
	// worktree that Head lacks: nothing runs there any more.
	Committed int `json:"committed,omitempty"`
	// Conflict lists files that conflict: with the target of a landing
	// that was refused, or, after an update, that still hold markers.
	Conflict []string `json:"conflict,omitempty"`
	Landed   *Landing `json:"landed,omitempty"`
	// Earlier are the session's landings before its worktree was made
	// again for a follow-up, oldest first: what a landed change became
	// stays on record when the next one starts.
	Earlier []Landing `json:"earlier_landings,omitempty"`
	// Error is the last thing zwarm could not do in the worktree (make
	// it, commit in it), for show.
	Error string `json:"error,omitempty"`
	// Lander is the process landing or updating the worker's change:
	// while it lives, nothing else may change the worktree (a follow-up,
	// another landing or update, a removal).
	Lander *proc.Ref `json:"lander,omitempty"`
}

// Landing is the last time a session's work was landed.
type Landing struct {
	// Commit is the commit the landing made (or, for a rebase, the tip it
	// moved the branch to); Into the branch.
	Commit   string             `json:"commit"`
	Into     string             `json:"into"`
	Strategy workspace.Strategy `json:"strategy"`
	At       time.Time          `json:"at"`
	// Head is the worker's commit that was landed.
	Head string `json:"head"`
	// Started is when the landing began, and Verify when its --verify
	// command ran (nil: it had none): a trace's land and verify spans.
	Started time.Time `json:"started,omitzero"`
	Verify  *Interval `json:"verify,omitempty"`
}

// Interval is a stretch of time.
type Interval struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Worktree is the workspace as the workspace package drives it.
func (w *Workspace) Worktree() *workspace.Worktree {
	own := w.OwnGitDir
	if own == "" && w.AdminDir == "" && w.Path != "" {
		// Made, and not recorded yet (the supervisor ended in between):
		// the repository beside the worktree is the worker's.
		if fi, err := os.Stat(workspace.OwnRepoFor(w.Path)); err == nil && fi.IsDir() {
			own = workspace.OwnRepoFor(w.Path)
		}
	}
	return &workspace.Worktree{Path: w.Path, CommonDir: w.GitDir, OwnDir: own, Branch: w.Branch, AdminDir: w.AdminDir, Exclude: w.Brought,
		Known: cmp.Or(w.Head, w.BaseCommit)}
}

// Dir is where the agent works: the worktree's subdirectory that matches
// the directory the session was spawned from.
func (w *Workspace) Dir() string {
	return filepath.Join(w.Path, w.Subdir)
}

// LandedNow reports whether what the worker has done is landed: it was
// landed and nothing was added since.
func (w *Workspace) LandedNow() bool {
	return w.Landed != nil && w.Head == w.Landed.Head
}

// Land records l as the session's landing. A landing of another change
// (the session went on working after the last one, in the worktree kept
// or made again) moves to Earlier: every landing stays on record.
func (w *Workspace) Land(l *Landing) {
	if o := w.Landed; o != nil && (o.Commit != l.Commit || o.Head != l.Head || o.Into != l.Into) {
		w.Earlier = append(w.Earlier, *o)
	}
	w.Landed = l
}

// RetireLanding moves the landing, if there is one, to Earlier: the
// worker's branch starts a change that is not landed.
func (w *Workspace) RetireLanding() {
	if w.Landed != nil {
		w.Earlier = append(w.Earlier, *w.Landed)
		w.Landed = nil
	}
}

// DiffBase is the commit the worker's change is measured from: its base,
// or, on a branch kept after a landing that has new work since, what was
// landed (so only the new work shows).
func (w *Workspace) DiffBase() string { return w.DiffBaseFor(w.Head) }

// DiffBaseFor is DiffBase for the worktree at commit head.
func (w *Workspace) DiffBaseFor(head string) string {
	if w.Landed != nil && w.Landed.Head != "" && head != w.Landed.Head {
		return w.Landed.Head
	}
	return w.BaseCommit
}

// AllCommitted reports whether everything s's worker did is in the
// commits: it is settled, and zwarm committed at the end of its last
// turn. Otherwise its worktree may hold work Head lacks (a turn running,
// or a supervisor that died before committing).
func (s *Session) AllCommitted() bool {
	return s.Workspace != nil && s.Settled() && s.Workspace.Committed == len(s.Turns) && s.Workspace.Error == ""
}

// LeftUncommitted reports whether a settled session's last turn ran and
// was never committed (its supervisor ended first): what it changed is
// in its worktree, for a landing (or a follow-up) to commit.
func (s *Session) LeftUncommitted() bool {
	return s.Workspace != nil && s.Settled() && len(s.Turns) > 0 && s.Workspace.Committed < len(s.Turns) && s.Workspace.Error == ""
}

// ChangeToLand reports whether s's work may still meet another worker's
// in the repository: it runs, or it settled in a worktree whose change is
// neither landed nor removed. A worker in place that settled has left its
// change in the checkout already.
func (s *Session) ChangeToLand() bool {
	if !s.Settled() {
		return true
	}
	w := s.Workspace
	return w != nil && w.State != WorkspaceRemoved && !w.LandedNow()
}

// Preparing reports whether the worktree is not made yet.
func (w *Workspace) Preparing() bool {
	return w.State == WorkspaceNew || w.State == WorkspacePreparing
}

// WorktreeAwaitsJob reports a worktree not being made yet because the
// session's job has not started: under a runner, its supervisor claims
// the session (and makes the worktree) only once the job runs, which may
// wait in the cluster's queue for hours.
func (s *Session) WorktreeAwaitsJob() bool {
	return s.Workspace != nil && s.Workspace.State == WorkspaceNew && s.RunnerName() != LocalRunner
}

// ChangesText is the CHANGES cell of a listing: "+120 -8 in 5 files",
// "landed", "conflict", "in place", and so on.
func (s *Session) ChangesText() string {
	w := s.Workspace
	switch {
	case w == nil:
		return "in place"
	case s.WorktreeAwaitsJob():
		return "–"
	case w.Preparing():
		return "preparing"
	case w.State == WorkspaceFailed:
		return "no worktree"
	case len(w.Conflict) > 0:
		return "conflict"
	case w.LandedNow():
		return "landed"
	case w.Changes == nil && s.LeftUncommitted():
		return "uncommitted"
	case w.Changes == nil && w.Error != "" && s.Settled():
		return "not committed" // zwarm could not: show says why
	case w.Changes == nil:
		return "–"
	case w.Changes.Empty():
		return "no changes"
	}
	return w.Changes.String()
}

// CloneWorkspace copies a workspace record deeply.
func CloneWorkspace(w *Workspace) *Workspace {
	if w == nil {
		return nil
	}
	c := *w
	c.Brought = append([]string(nil), w.Brought...)
	c.Conflict = append([]string(nil), w.Conflict...)
	c.Changes = ClonePtr(w.Changes)
	c.Landed = ClonePtr(w.Landed)
	c.Earlier = append([]Landing(nil), w.Earlier...)
	c.Lander = ClonePtr(w.Lander)
	return &c
}

// BranchHead is where a settled session's change ends now, the one
// answer diff, land (dry or not) and rm act on: the worker's branch as it
// is, when it holds the head zwarm recorded at the last turn's end and
// more (commits someone made on it by hand since, which are part of the
// change), else the recorded head. diverged says the branch was moved
// off the recorded head (reset or amended by hand): a landing refuses
// rather than guess which of the two is the change, and a removal counts
// the commits only the recorded head has.
func (ws *Workspace) BranchHead(ctx context.Context) (head string, diverged bool) {
	recorded := ws.Head
	if recorded == "" {
		recorded = ws.BaseCommit
	}
	tip := ws.Worktree().TipNear(ctx, recorded)
	switch {
	case tip == "" || tip == recorded:
		return ws.Head, false
	case workspace.IsAncestor(ctx, ws.GitDir, recorded, tip):
		return tip, false
	}
	return ws.Head, true
}

// ErrBusy is returned (wrapped) for a change asked of a worktree that a
// landing or an update is changing: nothing was done.
var ErrBusy = errors.New("another zwarm works in its worktree")

// Busy says who is landing or updating the session's change (an ErrBusy),
// nil if nobody alive is.
func (s *Session) Busy() error {
	if ws := s.Workspace; ws != nil && ws.Lander.Alive() {
		// What it does is the command that claimed it (its role).
		doing := map[string]string{"land": "landing it", "update": "updating it", "rm": "removing it", "clean": "removing it"}[ws.Lander.Role]
		if doing == "" {
			doing = "landing, updating or removing it"
		}
		return fmt.Errorf("%w: %s (zwarm pid %d); try again once it is done", ErrBusy, doing, ws.Lander.PID)
	}
	return nil
}

// TurnCommits is the commits before and after turn n, one of s's turns
// (from 1): to is "" when the turn changed nothing.
func (s *Session) TurnCommits(n int) (from, to string) {
	t := s.Turns[n-1]
	if t.From != "" {
		return t.From, t.Commit
	}
	to, from = t.Commit, s.Workspace.BaseCommit
	for i := n - 2; i >= 0; i-- {
		if c := s.Turns[i].Commit; c != "" {
			return c, to
		}
	}
	return from, to
}

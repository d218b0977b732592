package sessions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
	"github.com/zwarm/zwarm/sessions/telemetry"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// LandOptions say where and how a worker's change lands.
type LandOptions struct {
	// Strategy is squash (the default), merge or rebase.
	Strategy workspace.Strategy
	// Into is the branch to land into; "" means the branch checked out in
	// Dir.
	Into string
	// Dir is where the landing is asked from (the command's working
	// directory); "" means the current directory.
	Dir string
	// Message replaces the squash or merge commit's message (the task and
	// the worker's last message).
	Message string
	// DryRun checks everything and changes nothing.
	DryRun bool
	// Keep keeps the worktree and the branch after landing.
	Keep bool
	// Verify is a shell command run in a checkout of exactly what would
	// land, before anything lands; if it fails, nothing does.
	Verify string
	// VerifyStarts, if set, is called as the verify command starts.
	VerifyStarts func()
	// VerifyOut receives the verify command's output as it runs (nil:
	// only its end is kept, for the error).
	VerifyOut io.Writer
	// VerifyTimeout stops a verify command that runs longer, failing the
	// landing (0: workspace.DefaultVerifyTimeout).
	VerifyTimeout time.Duration
}

// LandResult is what a landing did (or, dry, would do).
type LandResult struct {
	Session *record.Session
	// Into is the branch; Commit the commit it now points at ("" dry).
	Into   string
	Commit string
	Stat   workspace.Stat
	Files  []workspace.FileStat
	// Already: it was landed before, and nothing was added since.
	Already bool
	// Nothing: the worker changed nothing (or the branch has it all).
	Nothing bool
	// Verified: the verify command passed on exactly what landed.
	Verified bool
	// Removed: the worktree and the branch were removed.
	Removed bool
	DryRun  bool
	// Uncommitted: a dry run's figures include work the worker left
	// uncommitted, which a landing commits first.
	Uncommitted bool

	started time.Time        // when the landing began
	verify  *record.Interval // when its --verify ran
}

// LandConflictError is a landing refused because the worker's change
// conflicts with the branch: nothing was changed.
type LandConflictError struct {
	ID, Into string
	Files    []string
}

func (e *LandConflictError) Error() string {
	return fmt.Sprintf("land %s: it conflicts with %s in %s; nothing was changed. zwarm update %s merges %s into the worker's branch and asks the worker to resolve them; then land it again",
		record.ShortID(e.ID), e.Into, strings.Join(e.Files, ", "), record.ShortID(e.ID), e.Into)
}

// DirtyError is a landing refused because the checkout it would update
// has uncommitted changes to files the landing changes: nothing was
// changed, and they are intact.
type DirtyError struct {
	ID, Checkout string
	Files        []string
}

func (e *DirtyError) Error() string {
	return fmt.Sprintf("land %s: %s has uncommitted changes to %s, which landing would overwrite; nothing was changed. Commit or stash them, then land again",
		record.ShortID(e.ID), e.Checkout, strings.Join(e.Files, ", "))
}

// ErrUnresolved is returned (wrapped) when a worker's branch still holds
// conflict markers from an update.
var ErrUnresolved = errors.New("unresolved conflict")

func unresolvedError(id string, files []string) error {
	return fmt.Errorf("land %s: %w: conflict markers from zwarm update are still in %s; the worker has to resolve them (zwarm inject %s \"resolve the conflicts in %s\"), then land it",
		record.ShortID(id), ErrUnresolved, strings.Join(files, ", "), record.ShortID(id), strings.Join(files, ", "))
}

// Land lands a settled session's change into a branch: the branch checked
// out where it is asked from (opt.Dir), or opt.Into. It refuses a session
// that still runs, checks for conflicts (git merge-tree) and for
// uncommitted changes the landing would overwrite before it changes
// anything, runs opt.Verify on exactly the result, then moves the branch
// (updating its checkout's files, never losing their uncommitted
// changes), records "landed" and removes the worktree and the branch
// (unless opt.Keep).
func (m *Manager) Land(ctx context.Context, idOrPrefix string, opt LandOptions) (*LandResult, error) {
	if err := m.trusted(); err != nil { // it runs git, with the settings
		return nil, err
	}
	id, err := listing.Resolve(m.st, idOrPrefix)
	if err != nil {
		return nil, err
	}
	unlock, err := m.st.LandLock(store.WithLockPolicy(ctx, store.LockPolicy{Notify: m.lockWaiting}))
	if err != nil {
		return nil, err
	}
	defer unlock()
	return m.land(ctx, id, opt)
}

// land lands session id, and with telemetry on sends the landing's spans
// (a refused one's too) into the session's trace.
func (m *Manager) land(ctx context.Context, id string, opt LandOptions) (*LandResult, error) {
	began := time.Now().UTC()
	res, err := m.landOne(ctx, id, opt)
	if cfg, cerr := m.Config(); cerr == nil && !opt.DryRun && telemetry.On(cfg) {
		if s, lerr := m.st.Load(id); lerr == nil {
			telemetry.SendLanding(cfg, s, began, landingVerify(res), err)
		}
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

func landingVerify(res *LandResult) *record.Interval {
	if res == nil {
		return nil
	}
	return res.verify
}

func (m *Manager) landOne(ctx context.Context, id string, opt LandOptions) (*LandResult, error) {
	strategy, err := workspace.ParseStrategy(string(opt.Strategy))
	if err != nil {
		return nil, config.Invalidf("%v", err)
	}
	s, release, err := m.claimToLand(ctx, id)
	if err != nil {
		return nil, err
	}
	defer release()
	s.Workspace.Worktree().RemoveStaleVerifyCheckouts(ctx)
	res := &LandResult{Session: s, DryRun: opt.DryRun, started: time.Now().UTC()}
	ws, pending, err := m.branchToLand(ctx, id, res, opt.DryRun)
	if err != nil {
		return nil, err
	}
	// Landed already means landed into the branch this landing targets:
	// with no --into, that is the branch checked out where it is asked
	// from, which need not be the one it went to before (land --into
	// release, then land from the checkout of main). Only when that
	// branch cannot be told is the earlier landing taken for this one.
	target, subdir, err := m.landTarget(ctx, ws, opt)
	if ws.LandedNow() {
		into := opt.Into
		if err == nil {
			into = target.Branch
		}
		if into == "" || into == ws.Landed.Into {
			res.Already, res.Into, res.Commit = true, ws.Landed.Into, ws.Landed.Commit
			return res, nil
		}
	}
	if err != nil {
		return nil, err
	}
	res.Into = target.Branch
	plan, err := workspace.PlanLanding(ctx, workspace.LandSpec{Who: record.ShortID(id), Worktree: ws.Worktree(), GitDir: ws.GitDir,
		From: ws.DiffBase(), Head: ws.Head, Pending: pending, Target: target, Strategy: strategy})
	if err != nil {
		return nil, m.landRefused(id, target, err)
	}
	res.Files, res.Stat, res.Uncommitted = plan.Files, plan.Stat, plan.Uncommitted
	switch {
	case plan.Empty:
		res.Nothing = true
		return res, nil
	case plan.InBranch:
		// The branch has all of it already: it counts as landed, so it
		// can go.
		res.Nothing = true
		if !opt.DryRun {
			landed := &record.Landing{Commit: target.Commit, Into: target.Branch, Strategy: strategy, At: time.Now().UTC(), Head: plan.Head}
			if s, err := m.recordWorkspace(id, func(ws *record.Workspace) { ws.Land(landed); ws.Conflict = nil }); err == nil {
				res.Session = s
			}
		}
		return res, nil
	case opt.DryRun:
		return res, nil // everything checked, nothing made
	}
	return m.applyLanding(ctx, id, ws, plan, target, strategy, subdir, opt, res)
}

// claimToLand is the session to land, claimed for the landing: its
// worktree was made, and no one else is changing it.
func (m *Manager) claimToLand(ctx context.Context, id string) (*record.Session, func(), error) {
	s, err := m.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	ws, err := workspaceOf(s)
	if err != nil {
		return nil, nil, err
	}
	// A worktree still being made belongs to a live session: that is the
	// refusal (claimWorktree's "still running"), not "never made".
	if ws.Preparing() && s.Settled() || ws.State == record.WorkspaceFailed {
		return nil, nil, fmt.Errorf("land %s: its worktree was never made (%s): there is nothing to land", record.ShortID(id), state.FirstNonBlank(ws.Error, string(ws.State)))
	}
	return m.claimWorktree(ctx, id, "land")
}

// branchToLand makes the worker's branch hold what lands: work its
// supervisor left uncommitted is committed (pending, without, on a dry
// run), and commits made on the branch by hand since its last turn are
// adopted. A branch moved off the worker's commits, or one with conflict
// markers left, is refused.
func (m *Manager) branchToLand(ctx context.Context, id string, res *LandResult, dry bool) (ws *record.Workspace, pending bool, err error) {
	s := res.Session
	ws = s.Workspace
	w := ws.Worktree()
	pending = w.Exists() && !s.AllCommitted()
	if pending && !dry {
		if s, err = m.commitLeftovers(ctx, s); err != nil {
			var ue *workspace.UnfinishedError
			if errors.As(err, &ue) && len(ue.Files) > 0 {
				return nil, false, unresolvedError(id, ue.Files)
			}
			return nil, false, fmt.Errorf("land %s: %w", record.ShortID(id), err)
		}
		ws, pending = s.Workspace, false
		res.Session = s
	}
	if !pending {
		head, diverged := ws.BranchHead(ctx)
		if diverged {
			return nil, false, fmt.Errorf("land %s: its branch %s was moved off the worker's last commit %s (reset or amended by hand) and is at %s now; nothing was changed. "+
				"Put the branch back to land the worker's commits (git -C %s reset --keep %s), or land what it has now yourself (git merge %s)",
				record.ShortID(id), ws.Branch, workspace.Abbrev(ws.Head), workspace.Abbrev(w.Tip(ctx)), w.Path, workspace.Abbrev(ws.Head), ws.Branch)
		}
		if head != ws.Head && dry {
			ws = record.CloneWorkspace(ws)
			ws.Head = head
		} else if head != ws.Head {
			if s, err = m.adoptHead(ctx, s, head); err != nil {
				return nil, false, fmt.Errorf("land %s: %w", record.ShortID(id), err)
			}
			ws, res.Session = s.Workspace, s
		}
	}
	if files := w.WithMarkers(ws.Conflict); w.Exists() && len(files) > 0 {
		return nil, false, unresolvedError(id, files)
	}
	return ws, pending, nil
}

// landRefused is the error of a landing its plan refused: a conflict is
// recorded (dry too: it is a fact about the change, which ls shows and
// the dashboard plans with), a checkout it would overwrite named.
func (m *Manager) landRefused(id string, target workspace.Target, err error) error {
	var ce *workspace.ConflictError
	var oe *workspace.OverlapError
	switch {
	case errors.As(err, &ce):
		m.setConflict(id, ce.Files)
		return &LandConflictError{ID: id, Into: target.Branch, Files: ce.Files}
	case errors.As(err, &oe):
		return &DirtyError{ID: id, Checkout: oe.Checkout, Files: oe.Files}
	}
	return err
}

// applyLanding makes the commit that lands plan, verifies it when asked,
// moves the branch to it, records the landing and removes the worktree
// (unless kept, or changed by hand since).
func (m *Manager) applyLanding(ctx context.Context, id string, ws *record.Workspace, plan *workspace.LandPlan, target workspace.Target,
	strategy workspace.Strategy, subdir string, opt LandOptions, res *LandResult) (*LandResult, error) {
	w := m.st.Worktree(ws)
	commit, head, err := m.landingCommit(ctx, id, res.Session, ws, plan, target, strategy, opt.Message)
	if err != nil {
		return nil, err
	}
	if opt.Verify != "" {
		res.verify = &record.Interval{Start: time.Now().UTC()}
		var writable []string
		if cfg, err := m.Config(); err == nil {
			writable = cfg.Worktrees.VerifyDirs()
		}
		if opt.VerifyStarts != nil {
			opt.VerifyStarts()
		}
		err := w.Verify(ctx, m.st.Dir(), commit, subdir, opt.Verify, opt.VerifyOut, opt.VerifyTimeout, m.confineArgv, writable, m.warn)
		res.verify.End = time.Now().UTC()
		if err != nil {
			return res, fmt.Errorf("land %s: %w; nothing was landed", record.ShortID(id), err)
		}
		res.Verified = true
	}
	if err := workspace.Advance(ctx, ws.GitDir, target, commit, "zwarm land "+id); err != nil {
		return nil, fmt.Errorf("land %s into %s: %w", record.ShortID(id), target.Branch, err)
	}
	res.Commit = commit
	landed := &record.Landing{Commit: commit, Into: target.Branch, Strategy: strategy, At: time.Now().UTC(), Head: head,
		Started: res.started, Verify: res.verify}
	s, err := m.recordWorkspace(id, func(ws *record.Workspace) { ws.Land(landed); ws.Conflict = nil })
	if err != nil {
		return res, fmt.Errorf("land %s: landed as %s, but the record could not say so: %w", record.ShortID(id), workspace.Abbrev(commit), err)
	}
	res.Session = s
	if !opt.Keep && w.Exists() { // landed: what it began is finished, a Ctrl+C or not
		m.removeLanded(context.WithoutCancel(ctx), id, w, commit, head, res)
	}
	return res, nil
}

// landingCommit is the commit that lands plan, and the worker's commit
// it lands: a rebase rewrites the worker's branch (recorded at once,
// whether or not what follows lands it); a squash or a merge is made in
// memory from the planned tree.
func (m *Manager) landingCommit(ctx context.Context, id string, s *record.Session, ws *record.Workspace, plan *workspace.LandPlan,
	target workspace.Target, strategy workspace.Strategy, msg string) (commit, head string, err error) {
	w := ws.Worktree()
	if strategy != workspace.Rebase {
		parents := []string{target.Commit}
		if strategy == workspace.Merge {
			parents = append(parents, plan.Head)
			if msg == "" {
				msg = state.MergeMessage(s, target.Branch)
			}
		} else if msg == "" {
			msg = state.SquashMessage(s)
		}
		if commit, err = workspace.CommitTree(ctx, ws.GitDir, plan.Tree, msg, parents...); err != nil {
			return "", "", fmt.Errorf("land %s: %w", record.ShortID(id), err)
		}
		return commit, plan.Head, nil
	}
	if !w.Exists() {
		return "", "", fmt.Errorf("land %s: its worktree is gone, and a rebase happens in it: land it with --squash or --merge", record.ShortID(id))
	}
	if commit, err = w.Rebase(ctx, target.Commit, ws.DiffBase()); err != nil {
		var ce *workspace.ConflictError
		if errors.As(err, &ce) {
			m.setConflict(id, ce.Files)
			return "", "", &LandConflictError{ID: id, Into: target.Branch, Files: ce.Files}
		}
		return "", "", fmt.Errorf("land %s: %w", record.ShortID(id), err)
	}
	_, stat, err := w.Changes(ctx, target.Commit, commit)
	if err != nil {
		return "", "", fmt.Errorf("land %s: %w", record.ShortID(id), err)
	}
	if _, err := m.recordWorkspace(id, func(ws *record.Workspace) {
		ws.BaseCommit, ws.Head, ws.Changes = target.Commit, commit, &stat
		ws.RetireLanding()
	}); err != nil {
		return "", "", fmt.Errorf("land %s: %w", record.ShortID(id), err)
	}
	return commit, commit, nil
}

// removeLanded removes the worktree of a landed change (the worker's
// head). Changes someone made in it by hand after the worker settled,
// committed or not (a commit made while the landing verified), did not
// land: they keep it.
func (m *Manager) removeLanded(ctx context.Context, id string, w *workspace.Worktree, commit, head string, res *LandResult) {
	dirty, err := w.Dirty(ctx)
	if tip := w.Tip(ctx); err == nil && tip != "" && tip != head {
		err = fmt.Errorf("its branch moved from %s to %s while it landed, and those commits did not land: land %s again to land them", workspace.Abbrev(head), workspace.Abbrev(tip), record.ShortID(id))
	}
	if err != nil || len(dirty) > 0 {
		if err == nil {
			err = fmt.Errorf("it has uncommitted changes to %s, which did not land (commit them there, and zwarm land %s again lands them)", strings.Join(dirty, ", "), record.ShortID(id))
		}
		m.warn(fmt.Errorf("land %s: landed as %s; its worktree %s is kept: %w", record.ShortID(id), workspace.Abbrev(commit), w.Path, err))
		return
	}
	if err := w.Remove(ctx, false); err != nil {
		m.warn(fmt.Errorf("land %s: landed as %s, but its worktree could not be removed: %w", record.ShortID(id), workspace.Abbrev(commit), err))
		return
	}
	res.Removed = true
	if s, err := m.recordWorkspace(id, func(ws *record.Workspace) { ws.State = record.WorkspaceRemoved }); err == nil {
		res.Session = s
	}
}

// landTarget finds the branch a landing goes into, and the directory
// (relative to the top of a checkout) that verify runs in.
func (m *Manager) landTarget(ctx context.Context, ws *record.Workspace, opt LandOptions) (workspace.Target, string, error) {
	dir := opt.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	branch, subdir := opt.Into, ws.Subdir
	repo, err := workspace.Find(ctx, dir)
	switch {
	case err == nil && repo.CommonDir != ws.GitDir:
		if b, _ := repo.CurrentBranch(ctx); branch == "" && strings.HasPrefix(b, "zwarm/") && filepath.Dir(repo.CommonDir) == filepath.Dir(ws.Path) {
			// A worker's worktree, in the worker's own repository.
			return workspace.Target{}, "", config.Invalidf("%s is a worker's branch (you are in a worker's worktree, %s): land into your own branch, from your checkout of %s or with --into", b, repo.Top, ws.Repo)
		}
		if branch == "" {
			return workspace.Target{}, "", config.Invalidf("%s is in another repository than the session's (%s): land from a checkout of it, or name the branch with --into", dir, ws.Repo)
		}
	case err == nil:
		subdir = repo.Prefix
		if branch == "" {
			if branch, err = repo.CurrentBranch(ctx); err != nil {
				return workspace.Target{}, "", config.Invalidf("%v", err)
			}
		}
	case errors.Is(err, workspace.ErrNotRepo):
		if branch == "" {
			return workspace.Target{}, "", config.Invalidf("%s is not in a git repository: land from a checkout of %s, or name the branch with --into", dir, ws.Repo)
		}
	default:
		return workspace.Target{}, "", err
	}
	if branch == ws.Branch || strings.HasPrefix(branch, "zwarm/") {
		// A worker's branch is no place to land: its own, or another
		// worker's, whose landing would then drop this change.
		return workspace.Target{}, "", config.Invalidf("%s is a worker's branch (you are in a worker's worktree?): land into your own branch, from your checkout or with --into", branch)
	}
	t, err := workspace.FindTarget(ctx, ws.GitDir, branch)
	if err != nil {
		return workspace.Target{}, "", config.Invalidf("%v", err)
	}
	return t, subdir, nil
}

// commitLeftovers commits what a settled session's worktree holds that
// is not committed yet, and records it.
func (m *Manager) commitLeftovers(ctx context.Context, s *record.Session) (*record.Session, error) {
	ws := s.Workspace
	w := ws.Worktree()
	head, made, err := w.Commit(ctx, fmt.Sprintf("zwarm %s: uncommitted work after turn %d", record.ShortID(s.ID), s.Turn))
	if err != nil {
		return nil, err // its callers name the session
	}
	turn := len(s.Turns)
	if !made && head == ws.Head {
		return m.recordWorkspace(s.ID, func(ws *record.Workspace) { ws.Committed = turn })
	}
	_, stat, err := w.Changes(ctx, ws.DiffBaseFor(head), head)
	if err != nil {
		return nil, err
	}
	return m.recordWorkspace(s.ID, func(ws *record.Workspace) { ws.Head, ws.Changes, ws.Committed = head, &stat, turn })
}

// adoptHead records head, on the worker's branch after the recorded
// head, as where the session's change ends.
func (m *Manager) adoptHead(ctx context.Context, s *record.Session, head string) (*record.Session, error) {
	ws := s.Workspace
	_, stat, err := ws.Worktree().Changes(ctx, ws.DiffBaseFor(head), head)
	if err != nil {
		return nil, err
	}
	return m.recordWorkspace(s.ID, func(ws *record.Workspace) { ws.Head, ws.Changes = head, &stat })
}

// recordWorkspace changes a settled session's workspace record. A
// settled record is cached by listings, so the change first advances the
// cache's generation (sessions/listing).
func (m *Manager) recordWorkspace(id string, fn func(*record.Workspace)) (*record.Session, error) {
	return m.st.UpdateSettled(context.Background(), id, func(tx *state.Tx) error {
		s := tx.Session()
		if s.Workspace == nil {
			return fmt.Errorf("session %s has no worktree", record.ShortID(id))
		}
		fn(s.Workspace)
		return nil
	})
}

// setConflict records the files a landing found conflicting, for ls.
func (m *Manager) setConflict(id string, files []string) {
	if _, err := m.recordWorkspace(id, func(ws *record.Workspace) { ws.Conflict = files }); err != nil {
		m.warn(err)
	}
}

// claimable says why the session's worktree cannot be claimed, nil if it
// can: it must have one, be settled, and nobody alive may hold it.
func claimable(s *record.Session) error {
	switch {
	case s.Workspace == nil:
		return &InPlaceError{ID: s.ID, Dir: s.WorkingDir}
	case s.Status() == record.StatusAttached:
		return attachedError(s)
	case !s.Settled():
		return fmt.Errorf("%w: wait or kill it first", ErrRunning)
	}
	return s.Busy()
}

// claimWorktree makes this process (role what) the session's lander: it
// must be settled, and stays so (a follow-up is refused) until release, so
// nothing runs in the worktree meanwhile. It returns the record as claimed.
func (m *Manager) claimWorktree(ctx context.Context, id, what string) (claimed *record.Session, release func(), err error) {
	self, err := proc.RefOf(os.Getpid())
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", what, record.ShortID(id), err)
	}
	self.Role = what // what Busy tells others
	claimed, err = m.st.UpdateCtx(m.writing(ctx), id, func(tx *state.Tx) error {
		s := tx.Session()
		if err := claimable(s); err != nil {
			return err
		}
		s.Workspace.Lander = self
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", what, record.ShortID(id), err)
	}
	return claimed, func() {
		m.st.Update(id, func(tx *state.Tx) error {
			s := tx.Session()
			if ws := s.Workspace; ws != nil && ws.Lander != nil && *ws.Lander == *self {
				ws.Lander = nil
			}
			return nil
		})
	}, nil
}

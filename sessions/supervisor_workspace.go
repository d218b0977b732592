package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/workspace"
)

// The supervisor's side of a session's worktree: making it before the
// first turn, committing what the agent left at each turn's end. Both run
// while no agent does, so the git processes they start are never taken
// for an agent's descendants by the reaper (which waits for any child
// only while an agent runs).

// needsMaking reports whether a session's worktree must be made before
// its next turn: it never was, its making failed or was cut short, or it
// was removed (landed, or deleted by hand).
func needsMaking(ws *Workspace) bool {
	return ws.State != WorkspaceReady || !ws.worktree().Exists()
}

// made is what the supervisor made of a worktree: its git dir, what it
// brought along, and its commit once made.
type made struct {
	head, admin string
	brought     []string
}

// gitTimeout bounds zwarm's own git work at a turn's end, which must not
// hold up a kill for long (the kill waits for the supervisor).
const gitTimeout = 30 * time.Second

// prepare makes the session's worktree: git worktree add at the base (or,
// after a landing removed it, at what was landed), what [worktrees] copy,
// symlink and .worktreeinclude bring along, then the setup command.
// Everything it does and prints goes to the session's setup.log.
func (sv *supervisor) prepare(ctx context.Context, ws *Workspace) (made, error) {
	var m made
	logf, err := OpenAppend(sv.st.Dir(), sv.st.SetupLog(sv.id))
	if err != nil {
		return m, fmt.Errorf("open the setup log: %w", err)
	}
	defer logf.Close()
	logLine := func(format string, a ...any) {
		fmt.Fprintf(logf, "zwarm: "+format+"\n", a...)
	}
	w := ws.worktree()
	if !w.Exists() {
		from := ws.BaseCommit
		if ws.Landed != nil {
			from = ws.Landed.Commit
		} else if ws.Head != "" {
			from = ws.Head
		}
		if err := sv.claimWorktreeDir(w.Path); err != nil {
			logLine("%v", err)
			return m, err
		}
		logLine("git worktree add %s on branch %s at %s", w.Path, w.Branch, workspace.Abbrev(from))
		if err := w.Add(ctx, from); err != nil {
			logLine("%v", err)
			return m, fmt.Errorf("make the worktree: %w", err)
		}
	}
	m.admin = w.AdminDir
	cfg, err := LoadConfig(sv.st.Dir(), sv.sections...)
	if err != nil {
		return m, err
	}
	include, err := workspace.ReadIncludeFile(ws.Origin)
	if err != nil {
		return m, fmt.Errorf("read .worktreeinclude: %w", err)
	}
	brought, lines, err := w.Bring(ctx, ws.Origin, append(append([]string(nil), cfg.Worktrees.Copy...), include...), cfg.Worktrees.Symlink)
	m.brought = brought
	for _, l := range lines {
		logLine("%s", l)
	}
	if err != nil {
		logLine("%v", err)
		return m, err
	}
	if setup := strings.TrimSpace(cfg.Worktrees.Setup); setup != "" {
		logLine("setup: %s", setup)
		start := time.Now()
		code, err := sv.runSetup(ctx, w.Path, setup, logf, cfg.Grace())
		switch {
		case err != nil:
			logLine("setup could not run: %v", err)
			return m, fmt.Errorf("setup %q could not run: %w", setup, err)
		case ctx.Err() != nil:
			logLine("setup stopped")
			return m, fmt.Errorf("setup %q was stopped: %w", setup, ctx.Err())
		case code != 0:
			logLine("setup failed with exit code %d after %s", code, time.Since(start).Round(time.Millisecond))
			logf.Sync()
			tail := lastLines(sv.st.SetupLog(sv.id), 6)
			return m, fmt.Errorf("setup %q failed with exit code %d:\n%s", setup, code, tail)
		}
		logLine("setup done in %s", time.Since(start).Round(time.Millisecond))
	}
	if m.head, err = w.Head(ctx); err != nil {
		return m, err
	}
	return m, nil
}

// claimWorktreeDir writes, beside where the worktree goes, the state dir
// whose session it is: commands run inside the worktree find the state
// dir through it, and another state dir never takes the worktree for a
// leftover of a session it does not have.
func (sv *supervisor) claimWorktreeDir(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return fmt.Errorf("make the worktree's directory: %w", err)
	}
	if err := writeFileAtomic(workspace.OwnerFile(path), []byte(sv.st.Dir()+"\n")); err != nil {
		return fmt.Errorf("record the worktree's state dir: %w", err)
	}
	return nil
}

// turnWork is what an agent process changed in its worktree over the
// turns it served, as zwarm committed it at the end.
type turnWork struct {
	commit  string // "" when nothing was committed during the turn
	from    string // the worktree's commit before the turn
	files   []string
	head    string
	changes *workspace.Stat
	// conflict is what is left of the files an update left conflicting,
	// checked again now that the worker had its turn.
	conflict []string
	err      string
}

// commitTurn commits what the agent left in the worktree at the end of
// turn n, and measures the change. It runs whatever ended the turn (a
// kill included), with a context of its own: no work is lost because the
// turn was stopped.
func (sv *supervisor) commitTurn(s *Session, n int) *turnWork {
	ws := s.Workspace
	if ws.State != WorkspaceReady {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	w := ws.worktree()
	prompt := ""
	if n >= 1 && n <= len(s.Turns) {
		prompt = s.Turns[n-1].Prompt
	}
	msg := fmt.Sprintf("zwarm %s turn %d: %s", ShortID(s.ID), n, firstLine(prompt, 72))
	head, madeOne, err := commitRetrying(ctx, w, msg)
	var ue *workspace.UnfinishedError
	if errors.As(err, &ue) {
		// The worker left a merge or a rebase halfway: its work stays in
		// the worktree, uncommitted, until it finishes (land refuses it
		// meanwhile).
		sv.log.Warn("turn's work left uncommitted", "turn", n, "why", err)
		return &turnWork{err: fmt.Sprintf("turn %d's work is not committed: %v", n, err), conflict: ue.Files}
	}
	if err != nil {
		sv.log.Error("commit the turn's work", "turn", n, "err", err)
		return &turnWork{err: fmt.Sprintf("turn %d's work is not committed: %v", n, err)}
	}
	before := ws.Head
	if before == "" {
		before = ws.BaseCommit
	}
	work := &turnWork{head: head, from: before}
	if head != before {
		work.commit = head
		files, _, err := w.Changes(ctx, before, head)
		if err != nil {
			sv.log.Warn("list the turn's files", "err", err)
		}
		for _, f := range files {
			work.files = append(work.files, f.Path)
		}
	}
	if _, stat, err := w.Changes(ctx, ws.diffBaseFor(head), head); err == nil {
		work.changes = &stat
	} else {
		sv.log.Warn("measure the change", "err", err)
	}
	if len(ws.Conflict) > 0 {
		work.conflict = w.WithMarkers(ws.Conflict)
	}
	sv.log.Info("turn committed", "turn", n, "commit", work.commit, "made", madeOne, "files", len(work.files))
	return work
}

// commitRetrying commits the turn's work, trying again for a little
// while when git's index is locked: a person running git in the worktree
// as the turn ends holds it for a moment.
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

// recordWork puts what turn n changed in the record.
func (s *Session) recordWork(n int, w *turnWork) {
	ws := s.Workspace
	if w == nil || ws == nil {
		return
	}
	if w.err != "" {
		ws.Error = w.err
		if len(w.conflict) > 0 {
			ws.Conflict = w.conflict
		}
		return
	}
	ws.Error, ws.Committed = "", n
	ws.Head, ws.Conflict = w.head, w.conflict
	if w.changes != nil {
		ws.Changes = w.changes
	}
	if n < 1 || n > len(s.Turns) {
		return
	}
	t := &s.Turns[n-1]
	t.Commit, t.From = w.commit, ""
	if w.commit != "" {
		t.From = w.from
	}
	t.Files, t.FilesOmitted = w.files, 0
	if len(t.Files) > MaxTurnFiles {
		t.Files, t.FilesOmitted = t.Files[:MaxTurnFiles], len(t.Files)-MaxTurnFiles
	}
}

func firstLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

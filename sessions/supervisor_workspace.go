package sessions

import (
	"context"
	"fmt"
	"os"
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

// made is a worktree the supervisor made.
type made struct {
	head    string
	brought []string
}

// gitTimeout bounds zwarm's own git work at a turn's end, which must not
// hold up a kill for long (the kill waits for the supervisor).
const gitTimeout = 30 * time.Second

// prepare makes the session's worktree: git worktree add at the base (or,
// after a landing removed it, at what was landed), what [worktrees] copy,
// symlink and .worktreeinclude bring along, then the setup command.
// Everything it does and prints goes to the session's setup.log.
func (sv *supervisor) prepare(ctx context.Context, ws *Workspace) (made, error) {
	logf, err := openAppend(sv.st.SetupLog(sv.id))
	if err != nil {
		return made{}, fmt.Errorf("open the setup log: %w", err)
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
		logLine("git worktree add %s on branch %s at %s", w.Path, w.Branch, shortCommit(from))
		if err := w.Add(ctx, from); err != nil {
			logLine("%v", err)
			return made{}, fmt.Errorf("make the worktree: %w", err)
		}
	}
	cfg, err := LoadConfig(sv.st.Dir(), sv.sections...)
	if err != nil {
		return made{}, err
	}
	include, err := workspace.ReadIncludeFile(ws.Origin)
	if err != nil {
		return made{}, fmt.Errorf("read .worktreeinclude: %w", err)
	}
	brought, lines, err := w.Bring(ws.Origin, append(append([]string(nil), cfg.Worktrees.Copy...), include...), cfg.Worktrees.Symlink)
	for _, l := range lines {
		logLine("%s", l)
	}
	if err != nil {
		logLine("%v", err)
		return made{}, err
	}
	if setup := strings.TrimSpace(cfg.Worktrees.Setup); setup != "" {
		logLine("setup: %s", setup)
		start := time.Now()
		code, err := sv.runSetup(ctx, w.Path, setup, logf, cfg.Grace())
		switch {
		case err != nil:
			logLine("setup could not run: %v", err)
			return made{}, fmt.Errorf("setup %q could not run: %w", setup, err)
		case ctx.Err() != nil:
			logLine("setup stopped")
			return made{}, fmt.Errorf("setup %q was stopped: %w", setup, ctx.Err())
		case code != 0:
			logLine("setup failed with exit code %d after %s", code, time.Since(start).Round(time.Millisecond))
			logf.Sync()
			tail := lastLines(sv.st.SetupLog(sv.id), 6)
			return made{}, fmt.Errorf("setup %q failed with exit code %d:\n%s", setup, code, tail)
		}
		logLine("setup done in %s", time.Since(start).Round(time.Millisecond))
	}
	head, err := w.Head(ctx)
	if err != nil {
		return made{}, err
	}
	return made{head: head, brought: brought}, nil
}

func openAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|noFollow, filePerm)
}

// turnWork is what an agent process changed in its worktree over the
// turns it served, as zwarm committed it at the end.
type turnWork struct {
	commit  string // "" when nothing was committed during the turn
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
	head, madeOne, err := w.Commit(ctx, msg)
	if err != nil {
		sv.log.Error("commit the turn's work", "turn", n, "err", err)
		return &turnWork{err: fmt.Sprintf("turn %d's work is not committed: %v", n, err)}
	}
	work := &turnWork{head: head}
	before := ws.Head
	if before == "" {
		before = ws.BaseCommit
	}
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

// recordWork puts what turn n changed in the record.
func (s *Session) recordWork(n int, w *turnWork) {
	ws := s.Workspace
	if w == nil || ws == nil {
		return
	}
	if w.err != "" {
		ws.Error = w.err
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
	t.Commit = w.commit
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

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

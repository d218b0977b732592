package supervisor

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// The supervisor's side of a session's worktree: making it before the
// first turn, committing what the agent left at each turn's end. Both run
// while no agent does, so the git processes they start are never taken
// for an agent's descendants by the reaper (which waits for any child
// only while an agent runs).

// gitTimeout bounds zwarm's own git work at a turn's end, which must not
// hold up a kill for long (the kill waits for the supervisor).
const gitTimeout = 30 * time.Second

// prepare makes the session's worktree: git worktree add at the base (or,
// after a landing removed it, at what was landed), what [worktrees] copy,
// symlink and .worktreeinclude bring along, then the setup command.
// Everything it does and prints goes to the session's setup.log.
func (sv *supervisor) prepare(ctx context.Context, ws *record.Workspace) (state.Made, error) {
	var m state.Made
	logf, err := sv.turns.Files.OpenSetupLog()
	if err != nil {
		return m, fmt.Errorf("open the setup log: %w", err)
	}
	defer logf.Close()
	logLine := func(format string, a ...any) {
		fmt.Fprintf(logf, "zwarm: "+format+"\n", a...)
	}
	w := ws.Worktree()
	if !w.Exists() {
		from := ws.BaseCommit
		if ws.Landed != nil {
			from = ws.Landed.Commit
		} else if ws.Head != "" {
			from = ws.Head
		}
		if err := sv.turns.Files.MarkWorktree(w.Path); err != nil {
			logLine("%v", err)
			return m, err
		}
		logLine("git worktree add %s on branch %s at %s", w.Path, w.Branch, workspace.Abbrev(from))
		if err := w.Add(ctx, from); err != nil {
			logLine("%v", err)
			return m, fmt.Errorf("make the worktree: %w", err)
		}
	}
	m.Admin, m.Own = w.AdminDir, w.OwnDir
	cfg, err := config.Load(sv.st.Dir(), sv.sections...)
	if err != nil {
		return m, err
	}
	include, err := workspace.ReadIncludeFile(ws.Origin)
	if err != nil {
		return m, fmt.Errorf("read .worktreeinclude: %w", err)
	}
	brought, lines, err := w.Bring(ctx, ws.Origin, append(append([]string(nil), cfg.Worktrees.Copy...), include...), cfg.Worktrees.Symlink)
	m.Brought = brought
	for _, l := range lines {
		logLine("%s", l)
	}
	if err != nil {
		logLine("%v", err)
		return m, err
	}
	if setup := strings.TrimSpace(cfg.Worktrees.Setup); setup != "" {
		made, err := sv.setup(ctx, w, setup, cfg.Grace(), m.Brought, logf, logLine)
		if err != nil {
			return m, err
		}
		m.Brought = append(m.Brought, made...)
	}
	if m.Head, err = w.Head(ctx); err != nil {
		return m, err
	}
	return m, nil
}

// commitTurn commits what the agent left in the worktree at the end of
// turn n, and measures the change. It runs whatever ended the turn (a
// kill included), with a context of its own: no work is lost because the
// turn was stopped.
func (sv *supervisor) commitTurn(s *record.Session, n int) *state.TurnWork {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	work := state.CommitWork(ctx, s.Workspace, state.CommitMessage(s, n), fmt.Sprintf("turn %d's work", n))
	if work != nil {
		for _, u := range work.Undone {
			sv.log.Warn("undid what the worker left that would steer or stop zwarm's git", "turn", n, "what", u)
		}
	}
	switch {
	case work == nil:
	case work.Err != "":
		sv.log.Warn("turn's work left uncommitted", "turn", n, "why", work.Err)
	default:
		sv.log.Info("turn committed", "turn", n, "commit", work.Commit, "files", len(work.Files))
	}
	return work
}

// setupError is a setup command that ended with code, not 0.
type setupError struct {
	code int
	err  error
}

func (e *setupError) Error() string { return e.err.Error() }

// setup runs the worktree's setup command in it, logged to the setup
// log, and returns what it made: not the worker's change, so left out of
// its commits, as what was brought along (brought) is.
func (sv *supervisor) setup(ctx context.Context, w *workspace.Worktree, setup string, grace time.Duration, brought []string,
	logf *os.File, logLine func(format string, a ...any)) ([]string, error) {
	logLine("setup: %s", setup)
	start := time.Now()
	code, err := sv.runSetup(ctx, w.Path, setup, logf, grace)
	switch {
	case err != nil:
		logLine("setup could not run: %v", err)
		return nil, fmt.Errorf("setup %q could not run: %w", setup, err)
	case ctx.Err() != nil:
		logLine("setup stopped")
		return nil, fmt.Errorf("setup %q was stopped: %w", setup, ctx.Err())
	case code != 0:
		logLine("setup failed with exit code %d after %s", code, time.Since(start).Round(time.Millisecond))
		logf.Sync()
		tail := lastLines(sv.st.SetupLog(sv.id), 6)
		return nil, &setupError{code, fmt.Errorf("setup %q failed with exit code %d:\n%s", setup, code, tail)}
	}
	logLine("setup done in %s", time.Since(start).Round(time.Millisecond))
	// What setup made is not the worker's change: left out of its
	// commits, as what was brought along is.
	w.Exclude = brought
	made, changed, err := w.SetupMade(ctx)
	if err != nil {
		logLine("look at what setup made: %v", err)
		return nil, fmt.Errorf("look at what setup %q made: %w", setup, err)
	}
	for _, p := range made {
		logLine("setup made %s: not the worker's, left out of its commits", p)
	}
	for _, p := range changed {
		logLine("setup changed %s, which git tracks: the change will be committed as the worker's unless setup leaves it alone", p)
	}
	return made, nil
}

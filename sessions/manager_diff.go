package sessions

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// ErrInPlace is a worktree operation on a session that works in place.
var ErrInPlace = errors.New("works in place")

// DiffRequest is what Diff shows.
type DiffRequest struct {
	// Turn, if not 0, shows that turn's change (its commit), not the whole.
	Turn    int
	Options workspace.DiffOptions
}

// Diff writes what a session's worker changed against its base to out,
// as git prints it (its worktree while that may hold uncommitted work,
// else its commits), and returns the session.
func (m *Manager) Diff(ctx context.Context, idOrPrefix string, out io.Writer, req DiffRequest) (*record.Session, error) {
	if err := m.trusted(); err != nil { // it runs git, with the settings
		return nil, err
	}
	s, err := m.Get(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	ws, err := workspaceOf(s)
	if err != nil {
		return s, err
	}
	if ws.Preparing() || ws.State == record.WorkspaceFailed {
		return s, nil // nothing changed yet
	}
	w := ws.Worktree()
	if req.Turn != 0 {
		if req.Turn < 1 || req.Turn > len(s.Turns) {
			return s, config.Invalidf("session %s has no turn %d (it has %d)", record.ShortID(s.ID), req.Turn, len(s.Turns))
		}
		from, to := s.TurnCommits(req.Turn)
		if to == "" {
			return s, nil // the turn changed nothing
		}
		return s, m.commitDiff(ctx, s, w, out, from, to, req.Options)
	}
	// A worker that may have left work uncommitted (it runs, or its
	// supervisor died before the turn's commit) is diffed as its worktree
	// is; otherwise its commits say it all (no file is looked at).
	if !s.AllCommitted() && w.Exists() {
		return s, w.WorkingDiff(ctx, out, ws.DiffBase(), req.Options)
	}
	if done, err := w.DiffAtRecordedTip(ctx, out, ws.DiffBaseFor(ws.Head), ws.Head, req.Options); done {
		return s, err
	}
	head, _ := ws.BranchHead(ctx)
	return s, m.commitDiff(ctx, s, w, out, ws.DiffBaseFor(head), head, req.Options)
}

func (m *Manager) commitDiff(ctx context.Context, s *record.Session, w *workspace.Worktree, out io.Writer, from, to string, o workspace.DiffOptions) error {
	err := w.Diff(ctx, out, from, to, o)
	if err == nil {
		return nil
	}
	// Only when git diff fails (a commit gc took) is each asked about.
	for _, c := range []string{from, to} {
		gone, err := workspace.CommitGone(ctx, w.CommonDir, c)
		if err != nil {
			return fmt.Errorf("diff %s: %w", record.ShortID(s.ID), err) // git cannot read the repository: it says why
		}
		if gone {
			msg := fmt.Sprintf("the commits of %s are gone from %s", record.ShortID(s.ID), w.CommonDir)
			if l := s.Workspace.Landed; l != nil {
				msg += fmt.Sprintf(" (its work was landed as %s: git show %s)", workspace.Abbrev(l.Commit), workspace.Abbrev(l.Commit))
			}
			return errors.New(msg)
		}
	}
	return err
}

// workspaceOf is the session's workspace, or an error saying it has none.
func workspaceOf(s *record.Session) (*record.Workspace, error) {
	if s.Legacy {
		return nil, fmt.Errorf("session %s was written by the Python zwarm, which made no worktrees: %w", record.ShortID(s.ID), ErrInPlace)
	}
	if s.Workspace == nil {
		return nil, &InPlaceError{ID: s.ID, Dir: s.WorkingDir}
	}
	return s.Workspace, nil
}

// InPlaceError is a worktree operation asked of a session that worked in
// place.
type InPlaceError struct{ ID, Dir string }

func (e *InPlaceError) Error() string {
	return fmt.Sprintf("session %s worked in place, in %s: it has no branch of its own (git diff there shows what changed)", record.ShortID(e.ID), e.Dir)
}

func (e *InPlaceError) Is(target error) bool {
	return target == ErrInPlace || target == config.ErrInvalidRequest
}

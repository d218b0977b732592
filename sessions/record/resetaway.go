package record

import (
	"context"
	"slices"
	"time"

	"github.com/zwarm/zwarm/sessions/workspace"
)

// ResetAway are the turns since the last landing whose committed work is
// on the worker's branch no longer, and so only in the commits zwarm keeps
// of each turn: the worker moved its branch off them (git reset), and
// removing the worktree would drop them. holds are the branch's heads
// (as it is now, and a tip it diverged to). A turn that ended before a
// landing is not counted: the landing took the branch as the worker had
// left it (a rebase landing rewrote its commits, and a worker may have
// amended them), and what was landed is the person's to judge.
func (s *Session) ResetAway(ctx context.Context, holds ...string) ([]int, error) {
	ws := s.Workspace
	if ws == nil || ws.GitDir == "" {
		return nil, nil
	}
	var since time.Time
	holds = append(holds, ws.BaseCommit)
	landings := slices.Clip(ws.Earlier)
	if ws.Landed != nil {
		landings = append(landings, *ws.Landed)
	}
	for _, l := range landings {
		holds = append(holds, l.Head)
		if l.At.After(since) {
			since = l.At
		}
	}
	off, err := workspace.KeptOff(ctx, ws.GitDir, ws.Branch, holds...)
	if err != nil || len(off) == 0 {
		return nil, err
	}
	var turns []int
	for i, t := range s.Turns {
		if t.Commit != "" && off[t.Commit] && (t.EndedAt == nil || t.EndedAt.After(since)) {
			turns = append(turns, i+1)
		}
	}
	return turns, nil
}

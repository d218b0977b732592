package record

import (
	"context"

	"github.com/zwarm/zwarm/sessions/workspace"
)

// ResetAway are the turns whose committed work is on the worker's branch
// no longer, nor in any landing, and so only in the commits zwarm keeps of
// each turn: the worker moved its branch off them (git reset), and
// removing the worktree would drop them. holds are the branch's heads
// (as it is now, and a tip it diverged to).
func (s *Session) ResetAway(ctx context.Context, holds ...string) ([]int, error) {
	ws := s.Workspace
	if ws == nil || ws.GitDir == "" {
		return nil, nil
	}
	holds = append(holds, ws.BaseCommit)
	if ws.Landed != nil {
		holds = append(holds, ws.Landed.Head)
	}
	for _, l := range ws.Earlier {
		holds = append(holds, l.Head)
	}
	off, err := workspace.KeptOff(ctx, ws.GitDir, ws.Branch, holds...)
	if err != nil || len(off) == 0 {
		return nil, err
	}
	var turns []int
	for i, t := range s.Turns {
		if t.Commit != "" && off[t.Commit] {
			turns = append(turns, i+1)
		}
	}
	return turns, nil
}

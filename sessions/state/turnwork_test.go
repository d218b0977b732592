package state

import (
	"fmt"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
)

// What zwarm undid before committing a turn goes in the turn's record,
// whether the turn's work was committed or not, and at most
// MaxTurnUndone lines of it: the rest is counted.
func TestATurnsRecordSaysWhatZwarmUndid(t *testing.T) {
	s := state("between")
	s.Workspace = &record.Workspace{Path: "/wt", Branch: "zwarm/x"}
	var undone []string
	for i := range record.MaxTurnUndone + 3 {
		undone = append(undone, fmt.Sprintf("removed /wt/d%d/pipe (a FIFO the worker left in its worktree)", i))
	}
	RecordWork(s, 1, &TurnWork{Commit: "c1", Head: "c1", Files: []string{"a"}, Undone: undone})
	tr := s.Turns[0]
	if len(tr.Undone) != record.MaxTurnUndone || tr.Undone[0] != undone[0] || tr.UndoneOmitted != 3 {
		t.Fatalf("committed turn: %d lines, %d omitted: %q", len(tr.Undone), tr.UndoneOmitted, tr.Undone)
	}
	RecordWork(s, 1, &TurnWork{Err: "turn 1's work is not committed: a rebase is in progress", Undone: undone[:1]})
	if tr := s.Turns[0]; len(tr.Undone) != 1 || tr.Undone[0] != undone[0] || tr.UndoneOmitted != 0 {
		t.Fatalf("uncommitted turn: %q, %d omitted", tr.Undone, tr.UndoneOmitted)
	}
	RecordWork(s, 1, &TurnWork{Commit: "c2", Head: "c2"})
	if tr := s.Turns[0]; tr.Undone != nil || tr.UndoneOmitted != 0 {
		t.Fatalf("a turn zwarm undid nothing of: %q, %d omitted", tr.Undone, tr.UndoneOmitted)
	}
}

package cli

import (
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
)

// A session whose worktree is made no longer reads "preparing worktree",
// though its agent has not taken a step yet.
func TestProgressDropsPreparingOnceTheWorktreeIsMade(t *testing.T) {
	p := &Progress{latest: map[string]string{}}
	s := &record.Session{ID: "3f2a0000-0000-4000-8000-000000000001", Workspace: &record.Workspace{State: record.WorkspacePreparing}}
	p.Update(watch.Update{Session: s})
	if got, want := p.latest[s.ID], string(s.Status())+" · turn 0 · preparing worktree"; got != want {
		t.Fatalf("while preparing: %q, want %q", got, want)
	}
	ready := *s
	ready.Turn, ready.Workspace = 1, &record.Workspace{State: record.WorkspaceReady}
	p.Update(watch.Update{Session: &ready})
	if got, want := p.latest[s.ID], string(ready.Status())+" · turn 1"; got != want {
		t.Fatalf("once made: %q, want %q", got, want)
	}
}

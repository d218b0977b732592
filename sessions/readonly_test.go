package sessions_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/state"
)

// readOnlyView is the world's state dir through a read-only bind mount,
// the state dir of a user who may read it but not write it.
func readOnlyView(t *testing.T, w *world) *sessions.Manager {
	t.Helper()
	ro := sessionstest.ReadOnlyView(t, w.Store.Dir())
	rst, err := state.NewStore(ro)
	if err != nil {
		t.Fatal(err)
	}
	return sessions.NewManager(sessions.ManagerOptions{Store: rst, Adapters: testAdapters{}, SupervisorArgv: []string{os.Args[0]}})
}

// Clean in a state dir it may not write fails and says why. It passes over
// a session whose worktree it cannot claim (one reopened or removed
// meanwhile), but a state dir that takes no claim at all is not that:
// it removed nothing, and said nothing, and exited 0.
func TestCleanInAReadOnlyStateDirFails(t *testing.T) {
	w := repoWorld(t, map[string]string{"README": "hi\n"})
	s := w.wait(w.spawnIn(w.Work, "nothing to change", sessions.SpawnRequest{}).ID)
	if s.Workspace == nil {
		t.Fatal("no worktree")
	}
	before, _ := os.ReadFile(w.Store.MetaPath(s.ID))
	m := readOnlyView(t, w)
	ctx := context.Background()
	plan, err := m.Clean(ctx, sessions.CleanOptions{DryRun: true})
	if err != nil || len(plan.Removed) != 1 {
		t.Fatalf("a dry run reads: %+v, %v", plan, err)
	}
	res, err := m.Clean(ctx, sessions.CleanOptions{})
	if !errors.Is(err, unix.EROFS) || res == nil || len(res.Removed) != 0 {
		t.Fatalf("clean in a read-only state dir: %+v, %v", res, err)
	}
	if after, _ := os.ReadFile(w.Store.MetaPath(s.ID)); string(after) != string(before) {
		t.Fatalf("the record changed:\n%s\n%s", before, after)
	}
	if _, err := os.Stat(s.Workspace.Path); err != nil {
		t.Fatalf("the worktree went: %v", err)
	}
}

// A follow-up to a session whose agent never began a thread (its first
// turn failed, or was interrupted, before it said one) starts the agent
// again with the task and the follow-up: the follow-up alone was all the
// new run knew, and the task was lost.
func TestAFollowUpWithoutAThreadCarriesTheTask(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.SetScript(fakeagent.Script{Default: []map[string]any{fakeagent.Out(`{"type":"turn.started"}`), {"exit": 1}}})
	s := w.wait(w.spawn("write the report").ID)
	if s.ThreadID != "" || s.Status() != record.StatusFailed {
		t.Fatalf("turn 1: %s, thread %q", s.Status(), s.ThreadID)
	}
	w.SetScript(fakeagent.Script{Default: fakeagent.Completes("done", 700)})
	if _, err := w.Manager.Inject(context.Background(), s.ID, "in French"); err != nil {
		t.Fatal(err)
	}
	s = w.wait(s.ID)
	if len(s.Turns) != 2 || s.Turns[1].Resumed || s.Turns[1].Prompt != "write the report\n\nA follow-up from the user: in French" {
		t.Fatalf("turn 2: %+v", s.Turns[len(s.Turns)-1])
	}
}

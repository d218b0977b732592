package sessions_test

import (
	"context"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// A follow-up that reopens a settled session starts its agent only once
// the supervisor that settled it has exited: that one's teardown kills the
// session's cgroup, and with it anything a new agent started there.
func TestNewSupervisorWaitsForThePreviousOne(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.wait(w.spawn("first").ID)

	// The test holds the lock as a previous supervisor still tearing down
	// would.
	l, err := state.LockFile(w.Store.Dir(), w.Store.SupervisorLockPath(s.ID))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Manager.Inject(context.Background(), s.ID, "then this"); err != nil {
		l.Unlock()
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	if p := w.Prompts(); len(p) != 1 {
		l.Unlock()
		t.Fatalf("the follow-up's agent started while the previous supervisor held the session: prompts %q", p)
	}
	l.Unlock()
	got := w.wait(s.ID)
	if got.Status() != record.StatusCompleted || len(got.Turns) != 2 {
		t.Fatalf("%s, %d turns", got.Status(), len(got.Turns))
	}
	if p := w.Prompts(); len(p) != 2 || p[1] != "then this" {
		t.Fatalf("prompts %q", p)
	}
}

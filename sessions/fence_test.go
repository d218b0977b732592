package sessions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// A supervisor whose session was taken over (the record names another
// owner: a follow-up's supervisor started after this one was judged gone,
// say, on a cluster that lost sight of its node) writes nothing more: its
// next write is refused, it stops its agent, and the record stays what the
// new owner made it.
func TestAStaleSupervisorIsFencedOff(t *testing.T) {
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "gate")
	w.SetScript(fakeagent.Script{Default: []map[string]any{
		fakeagent.Out(`{"type":"thread.started","thread_id":"t1"}`),
		{"wait_file": gate},
		fakeagent.Out(`{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"written by the stale one"}}`),
		fakeagent.Out(`{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":0,"output_tokens":1}}`),
	}})
	id, done := w.inProcess(context.Background(), "hold")
	sessionstest.Eventually(t, "the agent to run", func() bool { g, _ := w.Store.Load(id); return g.ThreadID == "t1" && g.Agent != nil })
	other := proc.Ref{PID: 1, Start: 1, Role: record.RoleSupervisor, Token: store.NewID()}
	if _, err := w.Store.Update(id, func(tx *state.Tx) error { s := tx.Session(); s.Owner = &other; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, state.ErrFenced) {
			t.Fatalf("the stale supervisor ended with %v, want ErrFenced", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the stale supervisor had not stopped a minute after its agent went on; want it to end with ErrFenced")
	}
	s, err := w.Store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Owner == nil || *s.Owner != other || s.LastMessage == "written by the stale one" || s.Turns[0].EndedAt != nil || s.Status() != record.StatusRunning {
		t.Fatalf("the stale supervisor changed the record: owner %+v, status %s, message %q, turn %+v", s.Owner, s.Status(), s.LastMessage, s.Turns[0])
	}
	if left := w.Manager.Containment(id).Procs(); len(left) > 0 {
		t.Fatalf("the stale supervisor left its agent running: %v", left)
	}
	// The record is the new owner's to settle; the test's cleanup must not
	// wait on a supervisor that is not there.
	w.Store.Update(id, func(tx *state.Tx) error {
		s := tx.Session()
		s.Owner = nil
		return tx.Abandon("test over", time.Now().UTC())
	})
}

package state_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
)

// rm and clean find a session settled, then remove it under its lock: one
// that a follow-up started again in between is kept whole, with its
// follow-up, and the removal says why; a settled one, or one whose record
// cannot be read (rm --force), goes.
func TestRemoveSettledKeepsASessionStartedAgain(t *testing.T) {
	st, err := state.NewStore(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		sessionstest.WriteSettledRecord(t, st, i)
	}
	again, settled, broken := sessionstest.SessionID(1), sessionstest.SessionID(2), sessionstest.SessionID(3)
	if _, err := st.Update(again, func(tx *state.Tx) error {
		sessionstest.SetStatus(tx.Session(), record.StatusPending) // a follow-up reopened it
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.MetaPath(broken), []byte("{not a record"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := st.RemoveSettled(t.Context(), again); !errors.Is(err, state.ErrStartedAgain) {
		t.Errorf("a session started again: %v, want ErrStartedAgain", err)
	}
	if _, err := st.Load(again); err != nil {
		t.Errorf("the session started again is gone: %v", err)
	}
	for _, id := range []string{settled, broken} {
		if err := st.RemoveSettled(t.Context(), id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
		if _, err := os.Stat(st.SessionDir(id)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", id, err)
		}
	}
}

package sessions_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
)

// Nothing runs from a state dir that is not trusted: spawn and inject
// refuse before they record anything; reading sessions is still allowed.
func TestAnUntrustedStateDirRunsNothing(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no user config trusts anything
	w := newWorld(t)
	s := w.spawn("fine")
	w.wait(s.ID)
	ctx := context.Background()
	os.Chmod(w.Store.Dir(), 0o777)
	defer os.Chmod(w.Store.Dir(), 0o700)
	before, _ := os.ReadDir(w.Store.SessionsDir())
	_, err := w.Manager.Spawn(ctx, sessions.SpawnRequest{Task: "x", Adapter: "fake", WorkingDir: w.Work})
	refusedUntrusted(t, "spawn", err, w.Store.Dir(), "can be written by others")
	_, err = w.Manager.Inject(ctx, s.ID, "more")
	refusedUntrusted(t, "inject", err, w.Store.Dir(), "can be written by others")
	_, err = w.Manager.Remove(ctx, s.ID, true)
	refusedUntrusted(t, "rm", err, w.Store.Dir(), "can be written by others")
	if after, _ := os.ReadDir(w.Store.SessionsDir()); len(after) != len(before) {
		t.Errorf("a refused spawn recorded something: %d entries, was %d", len(after), len(before))
	}
	if in, _ := w.Manager.Inbox(s.ID); len(in) != 0 {
		t.Errorf("a refused inject queued %d", len(in))
	}
	if list, err := w.Manager.List(ctx, listing.Options{}); err != nil || len(list) != 1 {
		t.Errorf("listing: %d, %v", len(list), err)
	}
	if got, err := w.Manager.Get(ctx, s.ID); err != nil || got.Status() != record.StatusCompleted {
		t.Errorf("get: %v", err)
	}
}

// refusedUntrusted checks that err refuses path as untrusted, saying why
// and how to trust it.
func refusedUntrusted(t *testing.T, what string, err error, path, why string) {
	t.Helper()
	var ue *config.UntrustedError
	if !errors.As(err, &ue) || ue.Path != path || !strings.Contains(ue.Why, why) || !strings.Contains(err.Error(), "[trust]") {
		t.Errorf("%s: want %s refused (%s), got %v", what, path, why, err)
	}
}

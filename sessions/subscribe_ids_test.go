package sessions_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/watch"
)

// A subscription to some sessions, which watches their directories and
// not the sessions dir, still sees one of them removed, and changed.
func TestSubscriptionToOneSessionSeesItChangedAndRemoved(t *testing.T) {
	st, err := state.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: st})
	for i := range 3 {
		sessionstest.WriteSettledRecord(t, st, i)
	}
	id := sessionstest.SessionID(1)
	// A ceiling for the whole test, generous for a machine at load 8 and more.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sub, err := m.Subscribe(ctx, watch.SubscribeOptions{IDs: []string{id[:8]}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	until := func(what string, ok func(watch.Update) bool) { t.Helper(); awaitUpdate(ctx, t, sub, what, ok) }
	until("the session as it is", func(u watch.Update) bool { return u.ID == id && u.Session != nil })
	if _, err := st.UpdateSettled(ctx, id, func(tx *state.Tx) error {
		s := tx.Session()
		s.LastMessage = "changed"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	until("the session changed", func(u watch.Update) bool { return u.Session != nil && u.Session.LastMessage == "changed" })
	if _, err := m.Remove(ctx, id, false); err != nil {
		t.Fatal(err)
	}
	until("the session removed", func(u watch.Update) bool { return u.ID == id && u.Removed })
}

// awaitUpdate reads sub's updates until one is what the test waits for,
// and returns it: a change may reach a subscription as more than one file
// event, and so as more than one update, on a busy machine. ctx is the
// test's ceiling.
func awaitUpdate(ctx context.Context, t *testing.T, sub *watch.Subscription, what string, want func(watch.Update) bool) watch.Update {
	t.Helper()
	var seen []string
	for {
		select {
		case u, open := <-sub.C():
			if !open {
				t.Fatalf("waiting for %s: the subscription ended (%v) after %q", what, sub.Err(), seen)
			}
			if want(u) {
				return u
			}
			seen = append(seen, describeUpdate(u))
		case <-ctx.Done():
			t.Fatalf("waiting for %s: not seen before the test's ceiling; saw %q", what, seen)
		}
	}
}

// describeUpdate says what an update held, for a failure message.
func describeUpdate(u watch.Update) string {
	switch {
	case u.Removed:
		return u.ID + " removed"
	case u.Session != nil:
		return u.ID + " " + string(u.Session.Status()) + " last message " + strconv.Quote(u.Session.LastMessage)
	case u.Err != nil:
		return u.ID + " error " + u.Err.Error()
	}
	return u.ID + " (nothing)"
}

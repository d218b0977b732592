package sessions

import (
	"context"
	"testing"
	"time"
)

// A subscription to some sessions, which watches their directories and
// not the sessions dir, still sees one of them removed, and changed.
func TestSubscriptionToOneSessionSeesItChangedAndRemoved(t *testing.T) {
	st, err := NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(ManagerOptions{Store: st})
	for i := range 3 {
		writeSettledRecord(t, st, i)
	}
	id := sessionID(1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := m.Subscribe(ctx, SubscribeOptions{IDs: []string{id[:8]}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	next := func(what string) Update {
		t.Helper()
		select {
		case u, ok := <-sub.C():
			if !ok {
				t.Fatalf("%s: the subscription ended: %v", what, sub.Err())
			}
			return u
		case <-ctx.Done():
			t.Fatalf("%s: no update", what)
		}
		return Update{}
	}
	if u := next("initial"); u.ID != id || u.Session == nil {
		t.Fatalf("initial: %+v", u)
	}
	if _, err := st.updateSettled(ctx, id, func(s *Session) error {
		s.LastMessage = "changed"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if u := next("changed"); u.Session == nil || u.Session.LastMessage != "changed" {
		t.Fatalf("changed: %+v", u)
	}
	if _, err := m.Remove(ctx, id, false); err != nil {
		t.Fatal(err)
	}
	if u := next("removed"); u.ID != id || !u.Removed {
		t.Fatalf("removed: %+v", u)
	}
}

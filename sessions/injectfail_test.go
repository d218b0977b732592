package sessions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
)

// A follow-up whose supervisor cannot be started (here its log is a
// planted symlink) is reported undelivered, with the reason, and the
// error says so: a retry once it is fixed delivers the new message only,
// not the failed one too.
func TestFailedInjectLeavesNoFollowUpQueued(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.wait(w.spawn("first").ID)
	log := w.Store.SupervisorLog(s.ID)
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(log)
	if err := os.Symlink(outside, log); err != nil {
		t.Fatal(err)
	}
	_, err := w.Manager.Inject(context.Background(), s.ID, "one")
	if err == nil || !strings.Contains(err.Error(), "symlink") || !strings.Contains(err.Error(), "not delivered") {
		t.Fatalf("inject with a planted supervisor log: %v", err)
	}
	inbox, _ := w.Store.Inbox(s.ID)
	if len(inbox) != 1 || inbox[0].State != record.InboxUndelivered || !strings.Contains(inbox[0].Reason, "symlink") {
		t.Fatalf("inbox: %+v", inbox)
	}
	if g, _ := w.Manager.Get(context.Background(), s.ID); !g.Settled() || g.PendingInjects != 0 {
		t.Fatalf("session %s, %d pending", g.Status(), g.PendingInjects)
	}

	os.Remove(log)
	res, err := w.Manager.Inject(context.Background(), s.ID, "two")
	if err != nil {
		t.Fatal(err)
	}
	e, got, err := w.Manager.WaitInbox(ctxTimeout(t, 2*time.Minute), s.ID, res.Entry.ID)
	if err != nil || e.State != record.InboxDelivered {
		t.Fatalf("the retry: %+v, %v; want it delivered (waiting at most two minutes)", e, err)
	}
	if p := w.Prompts(); len(p) != 2 || p[1] != "two" || len(got.Turns) != 2 {
		t.Fatalf("prompts %q, %d turns", p, len(got.Turns))
	}
}

//go:build stress

package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
)

// Inject interrupted at a random moment (its context cancelled, as Ctrl+C
// does) while the session's lock is held for a random while, or free.
// Right: the follow-up is delivered whole (it becomes a turn that ends
// completed) or not at all (the error wraps context.Canceled and the
// record is as it was: completed, nothing queued, no follow-up numbered).
func TestStressInjectInterrupted(t *testing.T) {
	n := stressN(t, 100)
	w := newWorld(t)
	s := w.wait(w.spawn("first").ID)
	var wrong []string
	delivered, interrupted := 0, 0
	for i := range n {
		bad := func(format string, a ...any) {
			wrong = append(wrong, fmt.Sprintf("try %d: ", i)+fmt.Sprintf(format, a...))
		}
		before, err := w.Store.Load(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		inboxBefore, _ := w.Store.Inbox(s.ID)
		var wg sync.WaitGroup
		if rand.IntN(2) == 0 {
			l, err := w.Store.Lock(s.ID)
			if err != nil {
				t.Fatal(err)
			}
			hold := time.Duration(rand.IntN(80000)) * time.Microsecond
			wg.Add(1)
			go func() { defer wg.Done(); time.Sleep(hold); l.Unlock() }()
		}
		ctx, cancel := context.WithCancel(context.Background())
		stop := time.AfterFunc(time.Duration(rand.IntN(80000))*time.Microsecond, cancel)
		res, err := w.Manager.Inject(ctx, s.ID, fmt.Sprintf("follow-up %d", i))
		stop.Stop()
		cancel()
		wg.Wait()
		switch {
		case err == nil:
			delivered++
			final := w.wait(s.ID)
			inbox, _ := w.Store.Inbox(s.ID)
			var e *record.InboxEntry
			for k := range inbox {
				if inbox[k].ID == res.Entry.ID {
					e = &inbox[k]
				}
			}
			switch {
			case e == nil:
				bad("the follow-up is not in the inbox")
			case e.State != record.InboxDelivered:
				bad("the follow-up is %s: %s", e.State, e.Reason)
			case e.Turn > len(final.Turns) || final.Turns[e.Turn-1].Status() != record.StatusCompleted:
				bad("its turn %d did not complete", e.Turn)
			}
			if final.Status() != record.StatusCompleted || final.PendingInjects != 0 {
				bad("the session ended %s (%s), %d pending", final.Status(), final.Error, final.PendingInjects)
			}
		case errors.Is(err, context.Canceled):
			interrupted++
			now, lerr := w.Store.Load(s.ID)
			inbox, _ := w.Store.Inbox(s.ID)
			switch {
			case lerr != nil:
				bad("record: %v", lerr)
			case now.Status() != before.Status() || !now.Settled():
				bad("the interrupted follow-up changed the session to %s (%s)", now.Status(), now.Error)
			case now.NextInboxSeq != before.NextInboxSeq || now.PendingInjects != 0 || len(inbox) != len(inboxBefore):
				bad("the interrupted follow-up left a trace: seq %d→%d, %d pending, inbox %d→%d",
					before.NextInboxSeq, now.NextInboxSeq, now.PendingInjects, len(inboxBefore), len(inbox))
			}
		default:
			bad("inject: %v", err)
		}
	}
	for _, m := range wrong {
		t.Error(m)
	}
	t.Logf("inject interrupted: %d tries, %d wrong outcomes (%d delivered whole, %d interrupted with nothing changed)",
		n, len(wrong), delivered, interrupted)
}

package sessions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
)

// A subscription without a window hands a turn over a stretch at a time:
// every event arrives once and in order, More says another update follows
// at once, and the turn's end comes with its last events, never before.
func TestSubscriptionHandsAHugeTurnOverInStretches(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	id := "3f2a0000-0000-4000-8000-000000000003"
	const n = 40_000 // about 5 MiB
	var b strings.Builder
	b.WriteString(`{"type":"thread.started","thread_id":"x"}` + "\n")
	for i := range n {
		fmt.Fprintf(&b, `{"type":"item.completed","item":{"id":"i%d","type":"agent_message","text":"message %d %s"}}`+"\n", i, i, strings.Repeat("y", 80))
	}
	writeSession(t, dir, id, b.String())
	m := manager(t, dir)
	for _, follow := range []bool{false, true} {
		got := 0
		ended, updates := false, 0
		fn := func(u watch.Update) {
			updates++
			for _, te := range u.Events {
				for _, ev := range te.Events {
					if ev.Type != record.EventMessage {
						continue
					}
					if want := fmt.Sprintf("message %d ", got); !strings.HasPrefix(ev.Text, want) {
						t.Fatalf("follow=%v: event %d is %.20q, want it to start %q", follow, got, ev.Text, want)
					}
					got++
				}
			}
			if len(u.Ended) > 0 {
				if u.More || got != n {
					t.Fatalf("follow=%v: the turn ended with %d of %d events read (more: %v)", follow, got, n, u.More)
				}
				ended = true
			}
		}
		if follow {
			// Follow reads on through every stretch, then returns.
			var steps []watch.Step
			err := m.Follow(context.Background(), id, watch.FollowOptions{OnUpdate: fn}, func(s watch.Step) {
				steps = append(steps, s)
			})
			if err != nil {
				t.Fatal(err)
			}
			if last := steps[len(steps)-1]; last.Kind != watch.StepTurnEnded {
				t.Fatalf("follow: the last step is %v, want the turn's end", last.Kind)
			}
		} else {
			sub, err := m.Subscribe(context.Background(), watch.SubscribeOptions{IDs: []string{id}, Events: true})
			if err != nil {
				t.Fatal(err)
			}
			timeout := time.After(time.Minute)
			for !ended {
				select {
				case u := <-sub.C():
					fn(u)
				case <-timeout:
					t.Fatalf("the turn's end did not come within a minute: %d of %d events in %d updates", got, n, updates)
				}
			}
			sub.Close()
		}
		if got != n || !ended || updates < 3 {
			t.Fatalf("follow=%v: %d of %d events in %d updates, ended %v; want all, in several updates", follow, got, n, updates, ended)
		}
	}
}

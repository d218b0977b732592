package watchers

import (
	"context"
	"github.com/zwarm/zwarm/sessions/watch"
	"testing"
	"time"
)

// Run wires the rules to a channel of updates and a timer: a silent
// worker is reported when its timer fires, with nothing polling, and
// Alerts closes when the updates end.
func TestRunReportsAStallByItsTimer(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Stall.FirstEvent.Duration = 50 * time.Millisecond
	var seen []string
	w := NewWorkers(cfg, WorkerOptions{OnUpdate: func(u watch.Update) { seen = append(seen, u.ID) }})
	updates := make(chan watch.Update)
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background(), updates) }()
	r := newRec("quiet").startTurn(time.Now())
	updates <- r.update(true)
	updates <- synced()
	select {
	case a := <-w.Alerts():
		if a.Watcher != "stall" || a.SessionID != "quiet" {
			t.Errorf("alert %+v", a)
		}
	case <-time.After(time.Minute):
		t.Fatal("the silent worker should have been reported stalled 50ms after its turn started; a minute on, no alert came")
	}
	close(updates)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, open := <-w.Alerts(); open {
		t.Error("Alerts is still open")
	}
	if len(seen) != 2 || seen[0] != "quiet" {
		t.Errorf("OnUpdate saw %v", seen)
	}
}

func TestRunEndsWithItsContext(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, make(chan watch.Update)) }()
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Run returned %v", err)
	}
}

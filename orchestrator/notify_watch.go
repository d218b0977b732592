package orchestrator

import (
	"context"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/watchers/notify"
)

// WatchRuns follows the runs of stateDir until ctx ends and calls tell
// with the [notify] event of each change it sees (RunNotice: a question,
// a stop), in order, on its own goroutine. What was so when it started is
// not told; a run that starts while it watches is, from its first record:
// one that asks or ends before it is first seen is told all the same.
// It is what zwarm watch does for the runs; the dashboard tells them from
// its own subscription.
func WatchRuns(ctx context.Context, stateDir string, tell func(notify.Event, *runs.Record)) error {
	sub, err := runs.Subscribe(ctx, stateDir, runs.SubscribeOptions{})
	if err != nil {
		return err
	}
	defer sub.Close()
	seen := map[string]*runs.Record{}
	synced := false
	for u := range sub.C() {
		switch {
		case u.Removed:
			delete(seen, u.ID)
		case u.Record != nil:
			prev, ok := seen[u.ID]
			if !ok && synced {
				prev = &runs.Record{ID: u.ID, Status: runs.StatusRunning}
			}
			if ev, ok := RunNotice(stateDir, prev, u.Record); ok {
				tell(ev, u.Record)
			}
			seen[u.ID] = u.Record
		}
		synced = synced || u.Synced
	}
	return sub.Err()
}

package orchestrator

import (
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/watchers/notify"
)

// A run's question and its end are told, each under a name every process
// gives it alike; nothing else is.
func TestRunNotice(t *testing.T) {
	end := time.Unix(1700000000, 5)
	q := &runs.Question{ID: "q1", Text: "Which port?"}
	rec := func(st runs.Status, q *runs.Question, ended *time.Time) *runs.Record {
		return &runs.Record{ID: "r1", Task: "t", Status: st, Question: q, EndedAt: ended, Summary: "s"}
	}
	left := rec(runs.StatusInterrupted, nil, &end)
	left.StopReason = leftReason // pilot's :quit
	for _, tc := range []struct {
		prev, cur *runs.Record
		name, key string
	}{
		{rec(runs.StatusRunning, nil, nil), rec(runs.StatusWaiting, q, nil), notify.RunAsks, "question-q1"},
		{rec(runs.StatusWaiting, q, nil), rec(runs.StatusCompleted, nil, &end), notify.RunFinished, "ended-1700000000000000005"},
		{rec(runs.StatusRunning, nil, nil), rec(runs.StatusInterrupted, nil, nil), notify.RunFinished, "ended"},
		{rec(runs.StatusWaiting, q, nil), rec(runs.StatusRunning, nil, nil), "", ""},
		{rec(runs.StatusRunning, nil, nil), rec(runs.StatusRunning, nil, nil), "", ""},
		{nil, rec(runs.StatusCompleted, nil, &end), "", ""},
		{rec(runs.StatusRunning, nil, nil), left, "", ""},
	} {
		ev, ok := RunNotice("/state", tc.prev, tc.cur)
		if ok != (tc.name != "") || ev.Name != tc.name || ev.Key != tc.key || ok && ev.Dir != "/state/runs/r1" {
			t.Errorf("%v > %v: %+v %v, want %q %q", tc.prev, tc.cur.Status, ev, ok, tc.name, tc.key)
		}
	}
}

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
	end, later := time.Unix(1700000000, 5), time.Unix(1700000100, 0)
	q, q2 := &runs.Question{ID: "q1", Text: "Which port?"}, &runs.Question{ID: "q2", Text: "Which host?"}
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
		// The records a consumer reads coalesce while it is busy: a run
		// answered and asking again reads waiting > waiting, and one
		// resumed and stopped again ended > ended. Each is told all the
		// same; a record rewritten with the same question or stop is not.
		{rec(runs.StatusWaiting, q, nil), rec(runs.StatusWaiting, q2, nil), notify.RunAsks, "question-q2"},
		{rec(runs.StatusWaiting, q, nil), rec(runs.StatusWaiting, q, nil), "", ""},
		{rec(runs.StatusCompleted, nil, &end), rec(runs.StatusCompleted, nil, &later), notify.RunFinished, "ended-1700000100000000000"},
		{rec(runs.StatusFailed, nil, &end), rec(runs.StatusCompleted, nil, &later), notify.RunFinished, "ended-1700000100000000000"},
		{rec(runs.StatusCompleted, nil, &end), rec(runs.StatusCompleted, nil, &end), "", ""},
	} {
		ev, ok := RunNotice("/state", tc.prev, tc.cur)
		if ok != (tc.name != "") || ev.Name != tc.name || ev.Key != tc.key || ok && ev.Dir != "/state/runs/r1" {
			t.Errorf("%v > %v: %+v %v, want %q %q", tc.prev, tc.cur.Status, ev, ok, tc.name, tc.key)
		}
	}
}

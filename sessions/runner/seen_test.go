package runner

import (
	"testing"
	"time"
)

// A reader that polls notes what the engine said when it says something
// new, when it stops answering, and every noteEvery: not at every poll.
func TestSeenIsNotedWhenItChanges(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	running := map[string]JobState{"51": {Phase: Running, Detail: "slurm 51 on node7", Session: "s"}}
	s := note(t.TempDir(), "slurm", running, false, at)
	for _, c := range []struct {
		name   string
		states map[string]JobState
		failed bool
		after  time.Duration
		want   bool
	}{
		{"the same answer a poll later", running, false, time.Second, false},
		{"the same answer after noteEvery", running, false, noteEvery, true},
		{"a job that changed", map[string]JobState{"51": {Phase: Ended, Why: "completed", Session: "s"}}, false, time.Second, true},
		{"a job not noted yet", map[string]JobState{"52": {Phase: Queued, Session: "t"}}, false, time.Second, true},
		{"no answer", nil, true, time.Second, true},
	} {
		if got := s.stale(c.states, c.failed, at.Add(c.after)); got != c.want {
			t.Errorf("%s: stale %v, want %v", c.name, got, c.want)
		}
	}
	down := note(t.TempDir(), "slurm", nil, true, at)
	if down.stale(nil, true, at.Add(time.Minute)) || !down.stale(running, false, at.Add(time.Second)) {
		t.Error("an engine still silent is noted again, or one that answers again is not")
	}
}

package tools

import (
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
)

// A message queued while the worker resumes its thread with one sent
// before (no turn runs yet) is not said to wait for a turn that has ended;
// with interrupt it is said to go first, as it does.
func TestAQueuedNoteSaysWhatTheMessageWaitsFor(t *testing.T) {
	ended, now := time.Now(), time.Now()
	resuming := &record.Session{Turn: 1, Turns: []record.Turn{{N: 1, StartedAt: now, EndedAt: &ended}}}
	running := &record.Session{Turn: 1, Turns: []record.Turn{{N: 1, StartedAt: now}}}
	for _, c := range []struct {
		s         *record.Session
		interrupt bool
		want      string
	}{
		{resuming, true, "queued to run next (0 ahead of it), before the messages sent without interrupt"},
		{resuming, false, "resuming its thread with an earlier message; this one is queued (0 ahead of it)"},
		{running, false, "busy with turn 1"},
	} {
		if got := queuedNote(&sessions.InjectResult{Outcome: sessions.InjectQueued, Turn: 1, Session: c.s}, c.interrupt); !strings.Contains(got, c.want) {
			t.Errorf("interrupt %v: %q, want %q in it", c.interrupt, got, c.want)
		}
	}
	// A worker whose first turn has not started (in a cluster's queue)
	// is busy with no turn 0.
	pending := &record.Session{}
	if got := queuedNote(&sessions.InjectResult{Outcome: sessions.InjectQueued, Session: pending}, false); !strings.Contains(got, "has not started its task yet") {
		t.Errorf("a pending worker: %q", got)
	}
}

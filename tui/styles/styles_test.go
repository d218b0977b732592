package styles

import (
	"testing"

	"github.com/zwarm/zwarm/orchestrator/runs"
)

// The palette names run statuses by their strings: every status a run
// can have has its own icon and colour.
func TestEveryRunStatusHasAnIconAndAColour(t *testing.T) {
	s := New()
	for _, st := range []runs.Status{runs.StatusRunning, runs.StatusCompleted, runs.StatusFailed, runs.StatusLimited, runs.StatusInterrupted} {
		if RunIcon(string(st)) == "?" {
			t.Errorf("run status %s has no icon", st)
		}
		if _, ok := s.runColors[string(st)]; !ok {
			t.Errorf("run status %s has no colour", st)
		}
	}
}

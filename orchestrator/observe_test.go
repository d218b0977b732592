package orchestrator

import (
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/tools"
	"github.com/zwarm/zwarm/sessions"
)

// A worker's end is news until an observation announcing it reached the
// model: a call that failed does not count.
func TestObservationNewsUntilAnnounced(t *testing.T) {
	end := time.Now().UTC()
	w := &sessions.Session{ID: "3f2a1c9d-0000-4000-8000-000000000001", Status: sessions.StatusFailed, Turn: 1, EndedAt: &end, Error: "tests fail"}
	r := &Run{rec: &Record{}, set: Settings{Limits: Limits{MaxSteps: 10}}, seen: tools.NewSeen(nil),
		workers: []*sessions.Session{w}, started: time.Now(), resumed: true}
	first, marks := r.observe(3)
	again, _ := r.observe(3)
	for _, text := range []string{first, again} {
		if !strings.Contains(text, "has been resumed") || !strings.Contains(text, w.ID+" failed (turn 1): tests fail") {
			t.Fatalf("observation %q", text)
		}
	}
	r.announced(marks)
	third, _ := r.observe(4)
	if strings.Contains(third, w.ID) || strings.Contains(third, "resumed") {
		t.Fatalf("announced news repeated: %q", third)
	}
	if !strings.HasPrefix(third, "[zwarm observation] Step 4 of 10.") || !strings.Contains(third, "Workers: 0 running") {
		t.Errorf("observation %q", third)
	}
	// A follow-up that ends again is news again.
	later := end.Add(time.Minute)
	w.EndedAt = &later
	if fourth, _ := r.observe(5); !strings.Contains(fourth, w.ID) {
		t.Errorf("a new end was not news: %q", fourth)
	}
}

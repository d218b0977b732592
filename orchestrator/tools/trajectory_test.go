package tools

import (
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
)

// A long final message, of many lines, leaves the compact trajectory its
// steps: each is one short line. It was one line as long as the message,
// which no bound held, and the answer showed no step at all.
func TestACompactTrajectoryKeepsItsStepsWhateverTheirLength(t *testing.T) {
	exit := 0
	report := strings.Repeat("a line of the worker's final report\n", 200) // 7 KB
	tl := watch.TurnLog{Turn: record.Turn{N: 1, Prompt: "the task"}, Events: []record.Event{
		{Type: record.EventCommand, Command: "go test ./...", ExitCode: &exit},
		{Type: record.EventMessage, Text: report},
	}}
	got := Trajectory(&record.Session{ID: "3f2a9c1d-0000-4000-8000-000000000001", Turn: 1}, []watch.TurnLog{tl}, false)
	if len(got) > compactTrajectoryBytes {
		t.Errorf("%d bytes, over the compact bound of %d", len(got), compactTrajectoryBytes)
	}
	for _, want := range []string{"#1 $ go test ./...", "#2 » a line of the worker's final report", "more bytes]"} {
		if !strings.Contains(got, want) {
			t.Errorf("the compact trajectory lacks %q:\n%s", want, got)
		}
	}
}

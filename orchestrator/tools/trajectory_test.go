package tools

import (
	"fmt"
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

// The full trajectory is each step at length, within bounds, and safe as
// the compact one is: a step of 20,000 changed files is shown cut, not
// left out with the turn it was in, and an agent's escape sequences come
// escaped.
func TestAFullTrajectoryBoundsAndEscapesEveryStep(t *testing.T) {
	var changes []record.FileChange
	for i := range 20000 {
		changes = append(changes, record.FileChange{Path: fmt.Sprintf("pkg/file%05d.go", i), Kind: "add"})
	}
	tl := watch.TurnLog{Turn: record.Turn{N: 1, Prompt: "the task"}, Events: []record.Event{
		{Type: record.EventMessage, Text: "colour \x1b[31mred\x1b[0m and a bell\x07"},
		{Type: record.EventFileChange, Changes: changes},
	}}
	got := Trajectory(&record.Session{ID: "3f2a9c1d-0000-4000-8000-000000000001", Turn: 1}, []watch.TurnLog{tl}, true)
	if len(got) > fullTrajectoryBytes {
		t.Errorf("%d bytes, over the full bound of %d", len(got), fullTrajectoryBytes)
	}
	for _, want := range []string{"── turn 1", "#1 » colour \\x1b[31mred", "#2 ", "pkg/file00000.go"} {
		if !strings.Contains(got, want) {
			t.Errorf("the full trajectory lacks %q:\n%.2000s", want, got)
		}
	}
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("the full trajectory carries raw control characters:\n%q", got[:min(len(got), 500)])
	}
}

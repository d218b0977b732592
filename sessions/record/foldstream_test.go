package record

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

func folded(f *StepFolder, events []Event) []Event {
	var out []Event
	emit := func(ev Event) { out = append(out, ev) }
	for _, ev := range events {
		f.Add(ev, emit)
	}
	f.Flush(emit)
	return out
}

// randomTurn is a turn of items that start, update and complete, at most
// a few at a time, with the odd item reported again once done.
func randomTurn(r *rand.Rand, n int) []Event {
	var out []Event
	var open []string
	types := []EventType{EventCommand, EventMessage, EventTodoList, EventToolCall, EventReasoning}
	for i := 0; i < n; i++ {
		switch {
		case len(open) > 0 && r.IntN(3) == 0:
			k := r.IntN(len(open))
			id := open[k]
			open = append(open[:k], open[k+1:]...)
			out = append(out, Event{Type: EventCommand, ItemID: id, Phase: PhaseCompleted, Output: fmt.Sprint("done ", i)})
			if r.IntN(4) == 0 {
				out = append(out, out[len(out)-1]) // the same again
			}
		case len(open) > 0 && r.IntN(3) == 0:
			out = append(out, Event{Type: EventCommand, ItemID: open[r.IntN(len(open))], Phase: PhaseUpdated, Output: fmt.Sprint("so far ", i)})
		case len(open) < 3 && r.IntN(2) == 0:
			id := fmt.Sprint("item_", i)
			open = append(open, id)
			out = append(out, Event{Type: EventCommand, ItemID: id, Phase: PhaseStarted, Command: "make"})
		default:
			out = append(out, Event{Type: types[r.IntN(len(types))], Text: fmt.Sprint("note ", i)})
		}
	}
	return out
}

// As long as nothing piles up past the limits, the stream folds exactly as
// Steps does on the whole turn.
func TestStepFolderMatchesSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 500 {
		events := randomTurn(r, 5+r.IntN(60))
		want := Steps(events)
		got := folded(&StepFolder{}, events)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d:\n got %d steps %+v\nwant %d steps %+v", round, len(got), got, len(want), want)
		}
	}
}

// A plan that stays open through a long turn does not make the folder hold
// the turn: finished steps go out past it, and memory stays bounded.
func TestStepFolderIsBounded(t *testing.T) {
	f := &StepFolder{MaxSteps: 10}
	emitted := 0
	emit := func(Event) { emitted++ }
	f.Add(Event{Type: EventTodoList, ItemID: "plan", Phase: PhaseStarted, Todos: []Todo{{Text: "a"}}}, emit)
	for i := range 10000 {
		f.Add(Event{Type: EventMessage, ItemID: fmt.Sprint("m", i), Phase: PhaseCompleted, Text: "x"}, emit)
		if len(f.buf) > 11 {
			t.Fatalf("after %d steps, %d wait", i, len(f.buf))
		}
	}
	f.Add(Event{Type: EventTodoList, ItemID: "plan", Phase: PhaseCompleted, Todos: []Todo{{Text: "a", Completed: true}}}, emit)
	f.Flush(emit)
	if emitted != 10001 {
		t.Fatalf("emitted %d steps, want 10001", emitted)
	}
}

// What the folder remembers of emitted steps, to drop one reported again,
// is bounded too; a plan restated at the end of a long turn is still
// recognised.
func TestStepFolderRemembersBoundedly(t *testing.T) {
	f := &StepFolder{}
	var out []Event
	emit := func(ev Event) { out = append(out, ev) }
	plan := Event{Type: EventTodoList, ItemID: "plan", Phase: PhaseCompleted, Todos: []Todo{{Text: "a", Completed: true}}}
	f.Add(plan, emit)
	const n = 5 * sentLimit
	for i := range n {
		ev := Event{Type: EventCommand, ItemID: fmt.Sprint("c", i), Phase: PhaseCompleted, Command: "true"}
		f.Add(ev, emit)
		f.Add(ev, emit) // the same again, at once
		if held := len(f.sent) + len(f.older); held > 2*sentLimit+1 {
			t.Fatalf("after %d steps the folder remembers %d", i, held)
		}
	}
	f.Add(plan, emit)
	f.Flush(emit)
	if len(out) != n+1 {
		t.Fatalf("emitted %d steps, want %d", len(out), n+1)
	}
}

// A finished item reported again is dropped only when it shows exactly
// the same: a change in any field, or text moved from one field to the
// next, is a step of its own.
func TestStepFolderDropsOnlyTheSameAgain(t *testing.T) {
	zero, one := 0, 1
	base := Event{Type: EventCommand, ItemID: "x", Phase: PhaseCompleted, Text: "ab", Command: "make",
		Output: "ok\n", Status: "completed", ExitCode: &zero,
		Changes: []FileChange{{Path: "a.go", Kind: "update"}}, Todos: []Todo{{Text: "t", Completed: false}}}
	changes := map[string]func(*Event){
		"text":            func(e *Event) { e.Text = "ac" },
		"text into cmd":   func(e *Event) { e.Text, e.Command = "a", "bmake" },
		"output":          func(e *Event) { e.Output = "ok\nmore\n" },
		"status":          func(e *Event) { e.Status = "failed" },
		"tool":            func(e *Event) { e.Tool = "Bash" },
		"input":           func(e *Event) { e.Input = "{}" },
		"exit code":       func(e *Event) { e.ExitCode = &one },
		"no exit code":    func(e *Event) { e.ExitCode = nil },
		"change path":     func(e *Event) { e.Changes = []FileChange{{Path: "b.go", Kind: "update"}} },
		"change kind":     func(e *Event) { e.Changes = []FileChange{{Path: "a.go", Kind: "add"}} },
		"another change":  func(e *Event) { e.Changes = append(e.Changes, FileChange{Path: "c.go", Kind: "add"}) },
		"todo done":       func(e *Event) { e.Todos = []Todo{{Text: "t", Completed: true}} },
		"todo text":       func(e *Event) { e.Todos = []Todo{{Text: "u"}} },
		"todo added":      func(e *Event) { e.Todos = append(e.Todos, Todo{Text: "v"}) },
		"change for todo": func(e *Event) { e.Changes, e.Todos = nil, []Todo{{Text: "a.go"}, {Text: "t"}} },
	}
	for name, change := range changes {
		again := base
		again.Changes = append([]FileChange(nil), base.Changes...)
		again.Todos = append([]Todo(nil), base.Todos...)
		change(&again)
		if out := folded(&StepFolder{}, []Event{base, again}); len(out) != 2 {
			t.Errorf("%s: %d steps emitted, want both", name, len(out))
		}
	}
	if out := folded(&StepFolder{}, []Event{base, base}); len(out) != 1 {
		t.Errorf("the same again: %d steps emitted, want 1", len(out))
	}
}

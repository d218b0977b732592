package sessions

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

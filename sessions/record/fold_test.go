package record

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// Compacted events fold into a record exactly as all of them do, and only
// the events that change the record are kept.
func TestCompactEventsFoldsTheSame(t *testing.T) {
	usage := func(n int) *Usage { return &Usage{InputTokens: int64(n), OutputTokens: 1} }
	cost := func(c float64) *float64 { return &c }
	kinds := []func(i int) Event{
		func(i int) Event {
			return Event{Type: EventThreadStarted, ThreadID: []string{"", "a", "b"}[i%3]}
		},
		func(i int) Event {
			return Event{Type: EventMessage, Phase: PhaseCompleted, Text: "m" + string(rune('a'+i%26))}
		},
		func(i int) Event {
			return Event{Type: EventMessage, Phase: PhaseStarted, Text: "ignored"}
		},
		func(i int) Event { return Event{Type: EventMessage, Text: ""} },
		func(i int) Event {
			return Event{Type: EventError, Text: []string{"", "e1", "e2"}[i%3]}
		},
		func(i int) Event {
			return Event{Type: EventCommand, Command: "ls", Output: "lots"}
		},
		func(i int) Event { return RawEvent([]byte("noise")) },
		func(i int) Event {
			return Event{Type: EventTurnCompleted, Usage: usage(i), Cumulative: i%2 == 0, CostUSD: cost(float64(i)),
				Denials: []Denial{{Tool: "Bash"}}}
		},
		func(i int) Event {
			return Event{Type: EventTurnFailed, Text: []string{"", "f"}[i%2], Usage: usage(i)}
		},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 500; round++ {
		var evs []Event
		for i := rng.IntN(40); i > 0; i-- {
			evs = append(evs, kinds[rng.IntN(len(kinds))](rng.IntN(100)))
		}
		base := func() *Session {
			return &Session{ThreadID: "old", Turns: []Turn{{N: 1, ThreadUsage: usage(3)}, {N: 2, LastMessage: "before"}}}
		}
		all, compact := base(), base()
		for _, ev := range evs {
			all.Fold(ev)
		}
		kept := CompactEvents(append([]Event(nil), evs...))
		for _, ev := range kept {
			compact.Fold(ev)
			switch ev.Type {
			case EventCommand, EventRaw:
				t.Fatalf("kept an event that changes nothing: %+v", ev)
			}
		}
		if !reflect.DeepEqual(all, compact) {
			t.Fatalf("round %d: folding %d events gives\n%+v\nfolding the %d compacted gives\n%+v", round, len(evs), all.Turns[1], len(kept), compact.Turns[1])
		}
	}
}

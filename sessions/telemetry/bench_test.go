package telemetry_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/telemetry"
)

// BenchmarkOff is what a span costs with telemetry off: a nil tracer takes
// it and does nothing (0 B/op, 0 allocs/op).
func BenchmarkOff(b *testing.B) {
	s, items, times := worker()
	spans := telemetry.TurnSpans(s, &s.Turns[0], items, times, "", false)
	var tr *telemetry.Tracer
	b.ReportAllocs()
	for b.Loop() {
		tr.Emit(spans...)
	}
}

// BenchmarkClockObserve is what the supervisor adds to each event it
// parses, telemetry on or off, to keep the turn's item times: ns/event and
// allocations over a turn of 100 items, each started, updated 8 times and
// completed (1,000 events).
func BenchmarkClockObserve(b *testing.B) {
	var evs []record.Event
	for i := range 100 {
		id := "item_" + strconv.Itoa(i)
		evs = append(evs, record.Event{Type: record.EventCommand, ItemID: id, Phase: record.PhaseStarted, Command: "go test ./..."})
		for range 8 {
			evs = append(evs, record.Event{Type: record.EventCommand, ItemID: id, Phase: record.PhaseUpdated, Output: "ok\n"})
		}
		evs = append(evs, record.Event{Type: record.EventCommand, ItemID: id, Phase: record.PhaseCompleted, ExitCode: new(int)})
	}
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		var c telemetry.Clock
		for i := range evs {
			c.Observe(evs[i:i+1], now)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}

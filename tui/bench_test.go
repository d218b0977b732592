package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
)

// BenchmarkAppendToModel measures what a user waits for: from an event
// appended to a running session's turn file until the dashboard's model
// shows it (file event, debounce, incremental read, Update).
func BenchmarkAppendToModel(b *testing.B) {
	f := newFixture(b)
	id := f.add(1, record.StatusRunning, "live", time.Minute)
	m := f.newModel(120, 40)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		text := fmt.Sprintf("step %d appended", i)
		f.appendTurn(id, 1, `{"type":"item.completed","item":{"id":"x`+fmt.Sprint(i)+`","type":"agent_message","text":"`+text+`"}}`)
		m = settle(b, m, func(m Model) bool { return strings.Contains(m.detail.View(), text) })
	}
}

// BenchmarkUpdate1000Sessions is the cost of one session's change with
// 1,000 sessions loaded (a running one's, as its supervisor writes it):
// reload its record, rebuild the list, draw.
func BenchmarkUpdate1000Sessions(b *testing.B) {
	f := newFixture(b)
	for i := range 1000 {
		f.add(i+1, record.StatusCompleted, fmt.Sprintf("task %d", i), time.Duration(i)*time.Minute)
	}
	id := f.add(1001, record.StatusRunning, "running", time.Minute)
	m := f.newModel(120, 40)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		touch := time.Now().Add(time.Duration(i) * time.Millisecond)
		f.touch(id, touch)
		m = settle(b, m, func(m Model) bool { return m.list.Get(id).UpdatedAt.Equal(touch.UTC()) })
		_ = m.View()
	}
}

// BenchmarkRunEventToModel measures how soon a run's step shows: from an
// event appended to events.jsonl until the dashboard's model shows it
// (file event, read of the new lines, Update).
func BenchmarkRunEventToModel(b *testing.B) {
	f := newFixture(b)
	f.addRun(runID, runs.StatusRunning, "live", time.Minute, 1, storySoFar("live"))
	m := f.newModel(120, 40)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		text := fmt.Sprintf("note %d appended", i)
		f.appendEvents(runID, runs.Event{Type: runs.EventWorker, Step: 3, Text: text})
		m = settle(b, m, func(m Model) bool { return strings.Contains(m.detail.View(), text) })
	}
}

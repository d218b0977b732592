package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
)

// BenchmarkAppendToModel measures what a user waits for: from an event
// appended to a running session's turn file until the dashboard's model
// shows it (file event, debounce, incremental read, Update).
func BenchmarkAppendToModel(b *testing.B) {
	f := newFixture(b)
	id := f.add(1, sessions.StatusRunning, "live", time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := f.m.Watch(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	m := New(ctx, Options{Sessions: f.m, StateDir: "/state", Changes: w.Changes(), Tick: -1})
	m = send(m, sizeMsg(120, 40))
	m = drive(b, m, m.loadAll())
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		text := fmt.Sprintf("step %d appended", i)
		f.appendTurn(id, 1, `{"type":"item.completed","item":{"id":"x`+fmt.Sprint(i)+`","type":"agent_message","text":"`+text+`"}}`)
		for !strings.Contains(m.detail.View(), text) {
			batch := <-w.Changes()
			m = drive(b, m, m.onChanges(batch))
		}
	}
}

// BenchmarkUpdate1000Sessions is the cost of one session's change with
// 1,000 sessions loaded: reload its record, rebuild the list, draw.
func BenchmarkUpdate1000Sessions(b *testing.B) {
	f := newFixture(b)
	var ids []string
	for i := range 1000 {
		ids = append(ids, f.add(i+1, sessions.StatusCompleted, fmt.Sprintf("task %d", i), time.Duration(i)*time.Minute))
	}
	m := f.newModel(120, 40)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		m = drive(b, m, m.onChanges([]sessions.Change{{ID: ids[i%len(ids)], Meta: true}}))
		_ = m.View()
	}
}

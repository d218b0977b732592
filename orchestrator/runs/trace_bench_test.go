package runs_test

import (
	"encoding/json"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/telemetry"
)

// BenchmarkStepSpans is what telemetry adds to one step of a run, the
// step's events (a model call, its response and usage, two tool calls and
// their results) made into spans and handed to the tracer: to an exporter
// that keeps them (on), and to a collector that refuses connections
// (dead: dropped unbuilt). ns/step, against BenchmarkLoopStep's whole step.
func BenchmarkStepSpans(b *testing.B) {
	for _, mode := range []string{"on", "dead"} {
		b.Run(mode, func(b *testing.B) {
			var tr *telemetry.Tracer
			if mode == "on" {
				tr = telemetry.New(tracetest.NewNoopExporter(), false)
			} else {
				var err error
				if tr, err = telemetry.OpenURL("http://127.0.0.1:1/v1/traces", nil, false, nil); err != nil {
					b.Fatal(err)
				}
				for tr.Emit(telemetry.Span{}); ; time.Sleep(time.Millisecond) {
					if n, _ := tr.Dropped(); n > 0 {
						break // the probe has found it refuses connections
					}
					tr.Emit(telemetry.Span{})
				}
			}
			defer tr.Close()
			sp := runs.Spans{Emit: tr.Emit}
			const id = "7c1e2f3a-0000-4000-8000-00000000beef"
			now := time.Now()
			sp.Add(runs.Event{Time: now, Type: runs.EventStarted, Run: id, Model: "gpt-5.1", Task: "t"})
			u, cost := &record.Usage{InputTokens: 9000, OutputTokens: 300}, 0.01
			b.ReportAllocs()
			step := 0
			for b.Loop() {
				step++
				for _, ev := range []runs.Event{
					{Type: runs.EventModelCall, Step: step, InputItems: 40},
					{Type: runs.EventModelResponse, Step: step, DurationMS: 900},
					{Type: runs.EventUsage, Step: step, Usage: u, CostUSD: &cost},
					{Type: runs.EventToolCall, Step: step, CallID: "call_a", Tool: "delegate", Args: json.RawMessage(`{"task":"x"}`)},
					{Type: runs.EventToolCall, Step: step, CallID: "call_b", Tool: "wait", Args: json.RawMessage(`{}`)},
					{Type: runs.EventToolResult, Step: step, CallID: "call_a", Tool: "delegate", Output: "started"},
					{Type: runs.EventToolResult, Step: step, CallID: "call_b", Tool: "wait", Output: "done"},
				} {
					ev.Time, ev.Run = now, id
					sp.Add(ev)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/step")
		})
	}
}

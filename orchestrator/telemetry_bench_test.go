package orchestrator

import (
	"context"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/jaegertest"
)

// deadCollector is an OTLP endpoint nobody listens on: every export is
// refused.
const deadCollector = "http://127.0.0.1:1"

// telemetryModes are telemetry off, on with a collector that is down, on
// with a real Jaeger taking every span, and off again (a control: how far
// two worlds alike differ here); each names the collector's base URL for a
// world ("" for off).
func telemetryModes(b *testing.B) []struct{ name, url string } {
	return []struct{ name, url string }{{"off", ""}, {"dead", deadCollector}, {"jaeger", jaegertest.Start(b).OTLP}, {"off-again", ""}}
}

// BenchmarkTelemetryWorker is a worker's whole life, spawn to settled, its
// agent printing a turn of 200 items (commands, messages, reasoning), with
// its supervisor's telemetry off, on with a collector that is down, and on
// with a real Jaeger, taken in turn within each iteration so that the
// machine's drift touches all three alike: ns/worker of each, and the
// ratio of each to off.
func BenchmarkTelemetryWorker(b *testing.B) {
	modes := telemetryModes(b)
	worlds := make([]*testenv.World, len(modes))
	for i, mode := range modes {
		cfg := ""
		if mode.url != "" {
			cfg = "[telemetry]\nendpoint = \"" + mode.url + "\"\n"
		}
		worlds[i] = testenv.New(b, bins, cfg)
		worlds[i].Script(map[string][]fakeagent.Step{"": append([]fakeagent.Step{
			fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), {"out_lines": 200}},
			fakeagent.Completes("done", 100)...)})
	}
	ctx := context.Background()
	spent := make([]time.Duration, len(modes))
	b.ResetTimer()
	for n := range b.N {
		for k := range modes {
			i := (n + k) % len(modes) // each mode first as often as the others
			began := time.Now()
			s, err := worlds[i].Manager.Spawn(ctx, sessions.SpawnRequest{Task: "bench", WorkingDir: worlds[i].Work})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := worlds[i].Manager.Wait(ctx, []string{s.ID}, sessions.WaitOptions{}); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(began)
		}
	}
	b.StopTimer()
	for i, mode := range modes {
		b.ReportMetric(float64(spent[i].Nanoseconds())/float64(b.N), "ns/worker-"+mode.name)
		b.ReportMetric(float64(spent[i])/float64(spent[0]), mode.name+"/off")
	}
	b.ReportMetric(0, "ns/op")
}

package orchestrator

import (
	"context"
	"encoding/json"
	"math/rand"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/model"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// timedClient measures the time spent in the model client.
type timedClient struct {
	model.Client
	spent atomic.Int64
}

func (c *timedClient) Respond(ctx context.Context, req *model.Request) (*model.Response, error) {
	began := time.Now()
	defer func() { c.spent.Add(int64(time.Since(began))) }()
	return c.Client.Respond(ctx, req)
}

// BenchmarkLoopStep is one step of a run against a fake model that answers
// at once with a call to list_sessions: the loop's own cost per step (the
// observation, accounting, the conversation and events made durable,
// run.json replaced, the tool call). ns/step is all of it, the HTTP round
// trip to the fake model included; overhead-ns/step leaves out the time
// inside the model client (request encoding, HTTP, stream decoding).
func BenchmarkLoopStep(b *testing.B) {
	h := &harness{t: &testing.T{}, key: "BENCH: loop"}
	srv, err := fakemodel.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	h.srv = srv
	h.w = newBenchWorld(b)
	srv.Fallback(fakemodel.Reply{Reasoning: "next", Encrypted: "E", Calls: []fakemodel.Call{call("list_sessions", map[string]any{})}})
	set := h.settings(func(s *Settings) { s.Limits.MaxSteps = b.N })
	opt := h.options(set, 0)
	opt.OnEvent = nil
	tc := &timedClient{Client: opt.Client}
	opt.Client = tc
	r, err := Start(context.Background(), opt, h.key)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	began := time.Now()
	rec, err := r.Execute(context.Background())
	total := time.Since(began)
	b.StopTimer()
	if err != nil || rec.Steps != b.N {
		b.Fatalf("%d steps, %v", rec.Steps, err)
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/step")
	b.ReportMetric(float64(total.Nanoseconds()-tc.spent.Load())/float64(b.N), "overhead-ns/step")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkCompact1000Steps compacts a 1,000-step history (reasoning,
// parallel calls, outputs of 0.5 to 4 KB, some huge) to 60% of its size.
func BenchmarkCompact1000Steps(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	h := newHistory()
	for i := 0; i < 1000; i++ {
		h.response(rng, 1, i%10 == 0, 1+rng.Intn(2), func() int {
			if rng.Intn(50) == 0 {
				return 40000
			}
			return 500 + rng.Intn(3500)
		})
	}
	items := h.items
	total := estimateAll(items, bytesEstimate)
	target := total * 6 / 10
	b.ReportAllocs()
	b.ResetTimer()
	var out []json.RawMessage
	for b.Loop() {
		var info *runs.Compaction
		out, info = compact(items, 2, target, bytesEstimate)
		if info == nil || estimateAll(out, bytesEstimate) > target {
			b.Fatal("not compacted")
		}
	}
	b.ReportMetric(float64(len(items)), "items")
	b.ReportMetric(float64(total), "tokens")
}

package sessions_test

import (
	"context"
	"testing"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/telemetry"
)

// A session started, or sent a follow-up, from within a span (an
// orchestrator's tool call) records it, so its trace joins the caller's.
func TestASessionRecordsTheSpanThatStartedIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tr, call := telemetry.TraceOf("7c1e2f3a-0000-4000-8000-00000000beef"), telemetry.SpanOf("tool", "run", 1, "call_1")
	ctx := telemetry.Context(context.Background(), tr, call)
	s, err := w.Manager.Spawn(ctx, sessions.SpawnRequest{Task: "t", Adapter: "fake", WorkingDir: w.Work})
	if err != nil {
		t.Fatal(err)
	}
	if s.TraceParent != telemetry.TraceParent(tr, call) || telemetry.SessionTrace(s) != tr {
		t.Fatalf("the session recorded %q", s.TraceParent)
	}
	w.wait(s.ID)
	later := telemetry.SpanOf("tool", "run", 4, "call_7")
	res, err := w.Manager.Inject(telemetry.Context(context.Background(), tr, later), s.ID, "more")
	if err != nil {
		t.Fatal(err)
	}
	if res.Entry.TraceParent != telemetry.TraceParent(tr, later) {
		t.Fatalf("the follow-up recorded %q", res.Entry.TraceParent)
	}
	w.wait(s.ID)
	if alone := w.spawn("by hand"); alone.TraceParent != "" || telemetry.SessionTrace(alone).String() == tr.String() {
		t.Fatalf("a session started outside any span recorded %q", alone.TraceParent)
	}
}

package telemetry_test

import (
	"bytes"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/sessionstest/jaegertest"
	"github.com/zwarm/zwarm/sessions/telemetry"
)

// The spans reach a real Jaeger over OTLP/HTTP and read back as one tree.
func TestSpansReadBackFromJaeger(t *testing.T) {
	t.Parallel()
	began := time.Now()
	j := jaegertest.Start(t)
	t.Logf("jaeger up in %s", time.Since(began))
	tr, err := telemetry.OpenURL(j.OTLP+"/v1/traces", map[string]string{"x-api-key": "k"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, items, times := worker()
	tr.Emit(telemetry.SessionSpan(s, *s.EndedAt, false))
	tr.Emit(telemetry.TurnSpans(s, &s.Turns[0], items, times, "", false)...)
	tr.Close()
	if n, err := tr.Dropped(); n != 0 {
		t.Fatalf("%d spans dropped: %v", n, err)
	}
	id := telemetry.TraceOf("7c1e2f3a-0000-4000-8000-00000000beef").String()
	t.Logf("sent at %s", time.Since(began))
	spans, err := j.Trace(t.Context(), id, "zwarm", 3, time.Minute)
	t.Logf("read back at %s", time.Since(began))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, sp := range spans {
		names[sp.SpanID] = sp.OperationName
	}
	var tree []string
	for _, sp := range spans {
		tree = append(tree, names[sp.Parent()]+" > "+sp.OperationName)
	}
	// The session's parent is the run's tool call, sent by another process:
	// not in this trace yet, so Jaeger knows it by its id alone.
	got := strings.Join(tree, "; ")
	for _, want := range []string{"invoke_agent codex > turn 1", "turn 1 > execute_tool shell"} {
		if !strings.Contains(got, want) {
			t.Errorf("the tree %q lacks %q", got, want)
		}
	}
}

// A collector that takes the connection and never answers costs at most
// the flush limit at exit.
func TestADeadCollectorNeverHoldsUpTheExit(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	var log bytes.Buffer
	tr, err := telemetry.OpenURL("http://"+l.Addr().String()+"/v1/traces", nil, false, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := worker()
	tr.Emit(telemetry.SessionSpan(s, *s.EndedAt, false))
	began := time.Now()
	tr.Close()
	// The bound is the flush limit, with room for a machine under load.
	if took := time.Since(began); took > telemetry.FlushLimit+5*time.Second {
		t.Fatalf("Close took %s with a collector that never answers", took)
	}
	// And the spans it could not send are said to be dropped, as they
	// are for a collector that refuses.
	if !strings.Contains(log.String(), "spans dropped: the collector did not answer in time") {
		t.Fatalf("the log says %q", log.String())
	}
}

// The Jaeger the tests run is the one the tools module pins (and .ci/run
// builds): jaegertest.Version names its binary.
func TestTheToolsModulePinsTheTestsJaeger(t *testing.T) {
	b, err := os.ReadFile("../../.ci/tools/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if want := "\tgithub.com/jaegertracing/jaeger " + jaegertest.Version + " "; !strings.Contains(string(b), want) {
		t.Fatalf(".ci/tools/go.mod does not pin jaeger %s", jaegertest.Version)
	}
}

// A collector that refuses connections is found out in the background and
// its spans are dropped unbuilt, counted, with the reason.
func TestARefusingCollectorsSpansAreDroppedUnbuilt(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nobody listens there now
	tr, err := telemetry.OpenURL("http://"+addr+"/v1/traces", nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	s, _, _ := worker()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		tr.Emit(telemetry.SessionSpan(s, *s.EndedAt, false))
		n, err := tr.Dropped()
		if n > 0 && err != nil && strings.Contains(err.Error(), "refuses connections") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s of spans to a closed port: %d dropped, %v", n, err)
		}
	}
}

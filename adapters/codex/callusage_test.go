package codex

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
)

// Codex's telemetry, as it sends it (OTLP/HTTP JSON, trimmed): only a
// response.completed event with token counts is a call's usage.
func TestCallUsageReadsResponseCompleted(t *testing.T) {
	attr := func(k, v string) string { return `{"key":"` + k + `","value":{"stringValue":"` + v + `"}}` }
	rec := func(attrs ...string) string {
		return `{"timeUnixNano":"1","attributes":[` + strings.Join(attrs, ",") + `]}`
	}
	body := `{"resourceLogs":[{"resource":{"attributes":[]},"scopeLogs":[{"scope":{"name":"codex_otel"},"logRecords":[` +
		rec(attr("event.name", "codex.sse_event"), attr("event.kind", "response.created")) + "," +
		rec(attr("event.name", "codex.sse_event"), attr("event.kind", "response.completed")) + "," +
		rec(attr("event.name", "codex.sse_event"), attr("event.kind", "response.completed"), attr("input_token_count", "100000"),
			attr("output_token_count", "10"), attr("cached_token_count", "4000"), `{"key":"reasoning_token_count","value":{"intValue":"3"}}`) +
		`]}]}]}`
	got := New().CallUsage([]byte(body))
	want := record.Usage{InputTokens: 100000, CachedInputTokens: 4000, OutputTokens: 10, ReasoningOutputTokens: 3, TotalTokens: 100010}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("%+v, want one call %+v", got, want)
	}
	if got := New().CallUsage([]byte("not json")); got != nil {
		t.Fatalf("garbage: %+v", got)
	}
}

// A turn given a usage endpoint sends codex's telemetry there, as JSON.
func TestUsageEndpointTurnsOnTelemetry(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	req := agent.TurnRequest{StateDir: t.TempDir(), Prompt: "p", WorkingDir: "/w", UsageEndpoint: "http://127.0.0.1:9/x/v1/logs"}
	cmd, err := New().Command(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cmd.Args, " "); !strings.Contains(got, `-c otel.exporter={otlp-http={endpoint="http://127.0.0.1:9/x/v1/logs",protocol="json"}}`) {
		t.Fatalf("args: %s", got)
	}
	req.UsageEndpoint = ""
	cmd, _ = New().Command(req)
	if strings.Contains(strings.Join(cmd.Args, " "), "otel") {
		t.Fatalf("telemetry without an endpoint: %s", cmd.Args)
	}
}

// With zwarm's telemetry on, codex's traces go to the same collector, and
// its logs too unless a cost limit wants them at the usage endpoint.
func TestTelemetryPointsCodexAtTheCollector(t *testing.T) {
	t.Setenv(BinaryEnv, "/bin/true")
	tel := agent.Telemetry{TracesURL: "http://c:4318/v1/traces", LogsURL: "http://c:4318/v1/logs", Headers: map[string]string{"x-key": `s"1`},
		ExportTimeout: 2 * time.Second}
	req := agent.TurnRequest{StateDir: t.TempDir(), Prompt: "p", WorkingDir: "/w", Telemetry: tel}
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "")
	cmd, err := New().Command(req)
	if err != nil {
		t.Fatal(err)
	}
	// A collector that never answers holds codex's exit for its
	// exporters' own bound: 10 s each, unless told.
	if !slices.Contains(cmd.Env, "OTEL_EXPORTER_OTLP_TIMEOUT=2000") {
		t.Errorf("env %q lacks the export bound", cmd.Env)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "7000")
	if cmd, _ := New().Command(req); len(cmd.Env) != 0 {
		t.Errorf("the person's own bound is overridden: %q", cmd.Env)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "")
	got := strings.Join(cmd.Args, " ")
	for _, want := range []string{
		`-c otel.trace_exporter={otlp-http={endpoint="http://c:4318/v1/traces",protocol="binary",headers={"x-key"="s\"1"}}}`,
		`-c otel.exporter={otlp-http={endpoint="http://c:4318/v1/logs",protocol="binary",headers={"x-key"="s\"1"}}}`,
		`-c otel.log_user_prompt=false`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("args lack %s:\n%s", want, got)
		}
	}
	req.UsageEndpoint = "http://127.0.0.1:9/x/v1/logs"
	cmd, _ = New().Command(req)
	got = strings.Join(cmd.Args, " ")
	if !strings.Contains(got, `otel.exporter={otlp-http={endpoint="http://127.0.0.1:9/x/v1/logs",protocol="json"}}`) || strings.Count(got, "otel.exporter=") != 1 {
		t.Errorf("with a usage endpoint too: %s", got)
	}
}

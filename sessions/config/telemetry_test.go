package config

import (
	"strings"
	"testing"
)

// The standard variables win over [telemetry]; a bad endpoint is refused
// with the name of what set it.
func TestTelemetryInForce(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       TelemetryConfig
		env       map[string]string
		url, errs string
		headers   string
	}{
		{name: "off"},
		{name: "config", cfg: TelemetryConfig{Endpoint: "http://c:4318/", Headers: map[string]string{"a": "1"}}, url: "http://c:4318/v1/traces", headers: "a=1"},
		{name: "the variable wins", cfg: TelemetryConfig{Endpoint: "http://c:4318"}, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://d"},
			url: "https://d/v1/traces"},
		{name: "a traces URL as it is", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://t.example/otel/v1/traces",
			"OTEL_EXPORTER_OTLP_HEADERS": "k=a%20b,project_id=e%2Fp"}, url: "https://t.example/otel/v1/traces", headers: "k=a b project_id=e/p"},
		{name: "disabled", cfg: TelemetryConfig{Endpoint: "http://c:4318"}, env: map[string]string{"OTEL_SDK_DISABLED": "true"}},
		{name: "no scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
			errs: `OTEL_EXPORTER_OTLP_ENDPOINT "localhost:4318" is not an http:// or https:// URL`},
		{name: "bad headers", cfg: TelemetryConfig{Endpoint: "http://c"}, env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"},
			errs: `"novalue" is not key=value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_SDK_DISABLED"} {
				t.Setenv(k, tc.env[k])
			}
			c := &Config{Tel: tc.cfg}
			got, url, err := c.Telemetry()
			if tc.errs != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errs) {
					t.Fatalf("err %v, want %q", err, tc.errs)
				}
				return
			}
			if err != nil || url != tc.url {
				t.Fatalf("url %q %v, want %q", url, err, tc.url)
			}
			var hs []string
			for _, k := range []string{"a", "k", "project_id"} {
				if v, ok := got.Headers[k]; ok {
					hs = append(hs, k+"="+v)
				}
			}
			if strings.Join(hs, " ") != tc.headers {
				t.Fatalf("headers %v, want %q", got.Headers, tc.headers)
			}
		})
	}
}

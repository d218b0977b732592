package config

import (
	"fmt"
	"net/url"
	"os"
	"strings"
)

// TelemetryConfig is config.toml's [telemetry] table: where zwarm sends its
// traces (OTLP over HTTP). The standard OpenTelemetry variables override
// it (Telemetry), so a person points every program they run, zwarm
// included, at one collector the same way.
type TelemetryConfig struct {
	// Endpoint is the collector's OTLP/HTTP base URL
	// (http://127.0.0.1:4318); traces go to its /v1/traces. Empty: off.
	Endpoint string `toml:"endpoint"`
	// Headers are sent with every export (an API key, say); they are
	// never logged or shown.
	Headers map[string]string `toml:"headers"`
	// Content exports prompts, messages and command output; without it a
	// trace holds their sizes only.
	Content bool `toml:"content"`
	// Disabled turns telemetry off whatever the endpoint.
	Disabled bool `toml:"disabled"`
}

const telemetryKeys = "[telemetry] endpoint/headers/content/disabled"

// Telemetry is the telemetry in force: [telemetry], then the variables
// OTEL_SDK_DISABLED, OTEL_EXPORTER_OTLP_ENDPOINT (a base URL),
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the traces URL itself, as the
// specification has it) and OTEL_EXPORTER_OTLP_HEADERS (k=v,k=v). TracesURL
// is empty when telemetry is off.
func (c *Config) Telemetry() (t TelemetryConfig, tracesURL string, err error) {
	t = c.Tel
	t.Headers = map[string]string{}
	for k, v := range c.Tel.Headers {
		t.Headers[k] = v
	}
	if v := os.Getenv("OTEL_SDK_DISABLED"); strings.EqualFold(v, "true") {
		t.Disabled = true
	}
	if v := os.Getenv("OTEL_EXPORTER_OTLP_HEADERS"); v != "" {
		for _, kv := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(kv, "=")
			if !ok {
				return t, "", fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: %q is not key=value", kv)
			}
			if uv, err := url.PathUnescape(strings.TrimSpace(val)); err == nil {
				val = uv
			}
			t.Headers[strings.TrimSpace(k)] = val
		}
	}
	base, from := t.Endpoint, "[telemetry] endpoint"
	if v := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		base, from = v, "OTEL_EXPORTER_OTLP_ENDPOINT"
	}
	if base != "" {
		tracesURL = strings.TrimRight(base, "/") + "/v1/traces"
	}
	if v := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); v != "" {
		tracesURL, base, from = v, v, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	}
	if t.Disabled || tracesURL == "" {
		return t, "", nil
	}
	if err := checkCollector(from, base, tracesURL); err != nil {
		return t, "", err
	}
	return t, tracesURL, nil
}

// CheckTelemetry refuses telemetry settings nothing could send with (a
// collector's address that is no http:// or https:// URL, headers that
// are not key=value), as a request's error: what starts a worker checks
// them first, so that they are not found later in a supervisor's log.
func (c *Config) CheckTelemetry() error {
	if _, _, err := c.Telemetry(); err != nil {
		return Invalidf("%v", err)
	}
	return nil
}

// TracesURL is the OTLP/HTTP traces URL of a collector given by its base
// URL (http://127.0.0.1:4318) or by that URL itself (…/v1/traces), or an
// error saying what is wrong with it; from names where it was given.
func TracesURL(from, base string) (string, error) {
	traces := base
	if !strings.HasSuffix(base, "/v1/traces") {
		traces = strings.TrimRight(base, "/") + "/v1/traces"
	}
	return traces, checkCollector(from, base, traces)
}

func checkCollector(from, base, traces string) error {
	u, err := url.Parse(traces)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s %q is not an http:// or https:// URL: give the collector's OTLP/HTTP address, such as http://127.0.0.1:4318", from, base)
	}
	return nil
}

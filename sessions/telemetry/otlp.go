package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// otlpHTTP sends spans to a collector as OTLP/HTTP in protobuf, what
// otlptracehttp sends. Neither that exporter nor the SDK's otlptrace is
// linked: the first's request and response types live in a package that
// also holds the collector's gRPC service, and linking grpc, its gateway
// and their registrations cost every zwarm command 0.9 ms at start; the
// second's, OTLP's generated types and the protobuf runtime, 0.25 ms
// (docs/performance.md), telemetry on or off. The spans are built by
// the SDK; what is here is their encoding (otlpenc.go) and the POST.
type otlpHTTP struct {
	url     string
	shown   string // url without its password, for errors
	headers map[string]string
	gzip    bool
	client  *http.Client
}

// otlpExporter is the SDK's span exporter that sends through c.
type otlpExporter struct{ c *otlpHTTP }

var _ sdktrace.SpanExporter = otlpExporter{}

func (e otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	if err := e.c.upload(ctx, exportRequest(spans)); err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

// Shutdown closes the exporter's idle connection.
func (e otlpExporter) Shutdown(context.Context) error {
	e.c.client.CloseIdleConnections()
	return nil
}

const (
	exportTimeout   = 5 * time.Second // one export, the batcher's bound and the POST's
	maxResponseBody = 64 << 10        // more than any collector's answer needs
)

// newOTLPHTTP is a client for the traces URL url. It honours the
// specification's variables (read with getenv) for what zwarm's config
// does not set: the collector's CA certificate, a client certificate and
// key, and gzip. It sends http/protobuf whatever OTEL_EXPORTER_OTLP_PROTOCOL
// says: every OTLP/HTTP collector takes it, and grpc, which the variable
// often names for other programs, is not spoken here.
func newOTLPHTTP(rawURL string, headers map[string]string, getenv func(string) string) (*otlpHTTP, error) {
	c := &otlpHTTP{url: rawURL, shown: rawURL, headers: headers}
	if u, err := url.Parse(rawURL); err == nil {
		c.shown = u.Redacted() // a password in the URL stays out of errors and the log
	}
	env := func(name string) otlpVar {
		for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_" + name, "OTEL_EXPORTER_OTLP_" + name} {
			if val := getenv(v); val != "" {
				return otlpVar{v, val}
			}
		}
		return otlpVar{}
	}
	switch v := env("COMPRESSION"); strings.ToLower(v.value) {
	case "", "none":
	case "gzip":
		c.gzip = true
	default:
		return nil, fmt.Errorf("%s=%q: give gzip or none", v.name, v.value)
	}
	tc, err := tlsFromEnv(env("CERTIFICATE"), env("CLIENT_CERTIFICATE"), env("CLIENT_KEY"))
	if err != nil {
		return nil, err
	}
	// A transport of its own, as otlptracehttp has: the default one may be
	// wrapped by whatever else the process links, and exports keep their
	// idle connection to themselves.
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          10,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       tc,
	}
	c.client = &http.Client{Transport: t, Timeout: exportTimeout,
		// A collector has no reason to redirect an export, and following
		// one would hand the headers (credentials) to wherever it points.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return c, nil
}

// otlpVar is one of the variables, as read: its name and its value.
type otlpVar struct{ name, value string }

// tlsFromEnv is the TLS the variables ask for, nil when they ask nothing.
func tlsFromEnv(ca, cert, key otlpVar) (*tls.Config, error) {
	if ca.value == "" && cert.value == "" && key.value == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca.value != "" {
		pem, err := os.ReadFile(ca.value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ca.name, err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: %s holds no PEM certificate", ca.name, ca.value)
		}
	}
	if cert.value != "" || key.value != "" {
		if cert.value == "" || key.value == "" {
			return nil, errors.New("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY go together: give both, or neither")
		}
		pair, err := tls.LoadX509KeyPair(cert.value, key.value)
		if err != nil {
			return nil, fmt.Errorf("%s and %s: %w", cert.name, key.name, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

// upload posts one ExportTraceServiceRequest, body. zwarm does not retry:
// a batch the collector did not take is dropped, and said in the log.
func (c *otlpHTTP) upload(ctx context.Context, body []byte) error {
	if c.gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(body) // a bytes.Buffer takes all
		zw.Close()
		body = b.Bytes()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "zwarm OTLP exporter")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if c.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	res, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBody+1))
	if err != nil {
		return fmt.Errorf("read the collector's answer: %w", err)
	}
	ct := res.Header.Get("Content-Type")
	switch {
	case res.StatusCode < 200 || res.StatusCode > 299:
		return fmt.Errorf("failed to send to %s: %s (body: %s)", c.shown, res.Status, refusal(ct, answer))
	case strings.HasPrefix(ct, "text/html"):
		// What a UI or a proxy's page says to any path: the spans went
		// nowhere.
		return fmt.Errorf("%s answered with a web page, not as an OTLP/HTTP collector: give the collector's OTLP/HTTP address (its port 4318, not its UI's)", c.shown)
	case len(answer) > maxResponseBody:
		return fmt.Errorf("%s answered with more than %d bytes, more than any collector says: is it an OTLP/HTTP collector?", c.shown, maxResponseBody)
	case strings.HasPrefix(ct, "application/x-protobuf"):
		return partialSuccess(answer)
	}
	return nil
}

// The field numbers of opentelemetry/proto/collector/trace/v1's messages.
const (
	requestResourceSpans = 1 // ExportTraceServiceRequest.resource_spans
	responsePartial      = 1 // ExportTraceServiceResponse.partial_success
	partialRejectedSpans = 1 // ExportTracePartialSuccess.rejected_spans
	partialErrorMessage  = 2 // ExportTracePartialSuccess.error_message
)

// statusMessage is google.rpc.Status's message, what an OTLP/HTTP
// collector answers a refused export with in protobuf.
const statusMessage = 2

// refusal is what a collector said when it refused an export, as text:
// the message of its Status in protobuf, else its body, without control
// characters (it reaches the log and a terminal).
func refusal(contentType string, body []byte) string {
	if contentType == "application/x-protobuf" {
		var msg []byte
		err := eachField(body, func(num, typ int, v []byte, _ uint64) error {
			if num == statusMessage && typ == wireBytes {
				msg = v
			}
			return nil
		})
		if err == nil && msg != nil {
			body = msg
		}
	}
	text := strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, string(body)))
	switch {
	case text == "":
		return "(empty)"
	case utf8.RuneCountInString(text) > maxRefusal:
		return string([]rune(text)[:maxRefusal]) + "…"
	}
	return text
}

// maxRefusal bounds the runes of a refusal's text in an error: a proxy's
// error page is not worth a screen of the log.
const maxRefusal = 300

// partialSuccess is the error an ExportTraceServiceResponse carries: nil
// unless the collector says it rejected spans or warns.
func partialSuccess(b []byte) error {
	var rejected int64
	var msg string
	err := eachField(b, func(num, typ int, v []byte, n uint64) error {
		if num != responsePartial || typ != wireBytes {
			return nil
		}
		return eachField(v, func(num, typ int, v []byte, n uint64) error {
			switch {
			case num == partialRejectedSpans && typ == wireVarint:
				rejected = int64(n)
			case num == partialErrorMessage && typ == wireBytes:
				msg = string(v)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	if rejected == 0 && msg == "" {
		return nil
	}
	return fmt.Errorf("the collector took the batch in part: %d spans rejected: %s", rejected, msg)
}

package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/zwarm/zwarm/sessions/sessionstest/jaegertest"
)

// The collector's own types, which zwarm does not link, decode what it sends
// and encode what a collector answers.

func someSpans(names ...string) []*tracepb.ResourceSpans {
	var out []*tracepb.ResourceSpans
	for i, name := range names {
		out = append(out, &tracepb.ResourceSpans{ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: "zwarm"},
			Spans: []*tracepb.Span{{Name: name, TraceId: bytes.Repeat([]byte{byte(i + 1)}, 16), SpanId: bytes.Repeat([]byte{byte(i + 1)}, 8)}},
		}}})
	}
	return out
}

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// collector answers each export with status and answer, and keeps what it
// was sent.
type collector struct {
	*httptest.Server
	got         chan *http.Request
	body        chan []byte
	status      int
	contentType string
	answer      []byte
}

func newCollector(t *testing.T, status int, contentType string, answer []byte) *collector {
	c := &collector{got: make(chan *http.Request, 10), body: make(chan []byte, 10), status: status, contentType: contentType, answer: answer}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.got <- r
		c.body <- b
		if c.contentType != "" {
			w.Header().Set("Content-Type", c.contentType)
		}
		w.WriteHeader(c.status)
		w.Write(c.answer)
	}))
	t.Cleanup(c.Close)
	return c
}

func upload(t *testing.T, url string, getenv func(string) string, spans []*tracepb.ResourceSpans) error {
	t.Helper()
	c, err := newOTLPHTTP(url, map[string]string{"x-api-key": "k1"}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	body, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: spans})
	if err != nil {
		t.Fatal(err)
	}
	return c.upload(ctx, body)
}

// What is sent is an ExportTraceServiceRequest of the spans, as the
// collector's own type decodes it, with the headers, plain or gzipped.
func TestTheExportIsTheCollectorsRequest(t *testing.T) {
	for _, gz := range []bool{false, true} {
		c := newCollector(t, http.StatusOK, "", nil)
		var e func(string) string = env()
		if gz {
			e = env("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
		}
		spans := someSpans("turn 1", "execute_tool shell")
		if err := upload(t, c.URL+"/v1/traces", e, spans); err != nil {
			t.Fatalf("gzip %v: %v", gz, err)
		}
		r, body := <-c.got, <-c.body
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || r.Header.Get("x-api-key") != "k1" {
			t.Errorf("gzip %v: %s %s, Content-Type %q, x-api-key %q", gz, r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("x-api-key"))
		}
		if got := r.Header.Get("Content-Encoding") == "gzip"; got != gz {
			t.Errorf("gzip %v: Content-Encoding %q", gz, r.Header.Get("Content-Encoding"))
		}
		if gz {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Fatalf("gzip %v: the body is not an ExportTraceServiceRequest: %v", gz, err)
		}
		if !proto.Equal(&req, &coltracepb.ExportTraceServiceRequest{ResourceSpans: spans}) {
			t.Errorf("gzip %v: the collector read %v", gz, &req)
		}
	}
}

// A collector that refuses the batch, or takes it in part, is an error
// saying what it said; an answer with nothing to say is none.
func TestWhatTheCollectorAnswers(t *testing.T) {
	partial, err := proto.Marshal(&coltracepb.ExportTraceServiceResponse{
		PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 2, ErrorMessage: "spans too old"}})
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	status, _ := proto.Marshal(&spb.Status{Code: 3, Message: "unsupported Content-Encoding: br"})
	for _, tc := range []struct {
		name, contentType string
		status            int
		answer            []byte
		want              string
	}{
		{"taken", "application/x-protobuf", 200, whole, ""},
		{"taken, no body", "", 200, nil, ""},
		{"taken, as JSON", "application/json", 200, []byte(`{}`), ""},
		{"taken in part", "application/x-protobuf", 200, partial, "the collector took the batch in part: 2 spans rejected: spans too old"},
		{"not a response", "application/x-protobuf", 200, []byte{0xff, 0xff}, "not an ExportTraceServiceResponse"},
		{"refused", "text/plain", 400, []byte("bad span id\n"), "400 Bad Request (body: bad span id)"},
		{"overloaded", "", 503, nil, "503 Service Unavailable (body: (empty))"},
		{"redirected", "", 307, nil, "307 Temporary Redirect"},
		{"too long an answer", "application/x-protobuf", 200, bytes.Repeat([]byte{0}, maxResponseBody+1), "answered with more than 65536 bytes"},
		{"refused at length", "text/plain", 502, bytes.Repeat([]byte("bad gateway "), 10000), "502 Bad Gateway (body: bad gateway bad gateway"},
		{"a long web page", "text/html", 200, bytes.Repeat([]byte("<p>"), maxResponseBody), "answered with a web page"},
		{"a web page", "text/html; charset=utf-8", 200, []byte("<!doctype html><title>Jaeger UI</title>"), "answered with a web page, not as an OTLP/HTTP collector"},
		{"refused with a status", "application/x-protobuf", 400, status, "400 Bad Request (body: unsupported Content-Encoding: br)"},
		{"refused with controls", "text/plain", 400, []byte("bad\x1b[2J\x00span"), "(body: bad [2J span)"},
	} {
		c := newCollector(t, tc.status, tc.contentType, tc.answer)
		err := upload(t, c.URL+"/v1/traces", env(), someSpans("s"))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		case err != nil && len(err.Error()) > 1000:
			t.Errorf("%s: an error of %d bytes, for the log", tc.name, len(err.Error()))
		}
	}
}

// A redirect is not followed: the headers, credentials among them, never
// go where a collector points.
func TestARedirectKeepsTheHeadersHome(t *testing.T) {
	elsewhere := newCollector(t, http.StatusOK, "", nil)
	c := newCollector(t, http.StatusTemporaryRedirect, "", nil)
	c.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/v1/traces", http.StatusTemporaryRedirect)
	})
	if err := upload(t, c.URL+"/v1/traces", env(), someSpans("s")); err == nil || !strings.Contains(err.Error(), "307") {
		t.Errorf("a redirected export: %v, want it failed with the 307", err)
	}
	select {
	case r := <-elsewhere.got:
		t.Errorf("the export followed the redirect, x-api-key %q", r.Header.Get("x-api-key"))
	default:
	}
}

// A collector behind TLS with a private CA is reached when
// OTEL_EXPORTER_OTLP_CERTIFICATE names the CA, and not without it; bad
// settings are refused when the tracer opens.
func TestTLSAndCompressionFromTheEnvironment(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake, expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := upload(t, srv.URL+"/v1/traces", env(), someSpans("s")); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want a certificate error", err)
	}
	if err := upload(t, srv.URL+"/v1/traces", env("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", ca), someSpans("s")); err != nil {
		t.Errorf("with the CA: %v", err)
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"}, `OTEL_EXPORTER_OTLP_COMPRESSION="zstd": give gzip or none`},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "br", "OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"}, `OTEL_EXPORTER_OTLP_TRACES_COMPRESSION="br"`},
		{[]string{"OTEL_EXPORTER_OTLP_CERTIFICATE", ca + ".missing"}, "OTEL_EXPORTER_OTLP_CERTIFICATE: open"},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", os.Args[0]}, "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: " + os.Args[0] + " holds no PEM certificate"},
		{[]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", ca}, "go together: give both, or neither"},
		{[]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", ca, "OTEL_EXPORTER_OTLP_CLIENT_KEY", ca}, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY: "},
	} {
		if _, err := newOTLPHTTP(srv.URL, nil, env(tc.env...)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.env, err, tc.want)
		}
	}
}

// A collector that asks for a client certificate takes the export with
// the one the variables name, and refuses it without.
func TestAClientCertificateFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	pool := x509.NewCertPool()
	pool.AddCert(selfSigned(t, cert, key))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake, expected
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := upload(t, srv.URL+"/v1/traces", env("OTEL_EXPORTER_OTLP_CERTIFICATE", ca), someSpans("s")); err == nil {
		t.Error("without a client certificate the export went through")
	}
	if err := upload(t, srv.URL+"/v1/traces", env("OTEL_EXPORTER_OTLP_CERTIFICATE", ca,
		"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", cert, "OTEL_EXPORTER_OTLP_CLIENT_KEY", key), someSpans("s")); err != nil {
		t.Errorf("with the client certificate: %v", err)
	}
}

// selfSigned writes a client certificate and its key as PEM files, and
// returns the certificate.
func selfSigned(t *testing.T, certPath, keyPath string) *x509.Certificate {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "zwarm test client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A password in the collector's URL is sent and never shown.
func TestAPasswordInTheURLStaysOutOfErrors(t *testing.T) {
	c := newCollector(t, http.StatusBadRequest, "text/plain", []byte("no"))
	u := strings.Replace(c.URL, "http://", "http://user:s3cret@", 1) + "/v1/traces"
	err := upload(t, u, env(), someSpans("s"))
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "user:xxxxx@") {
		t.Errorf("refused: %v, want the URL without its password", err)
	}
	if r := <-c.got; r.Header.Get("Authorization") == "" {
		t.Error("the URL's user and password were not sent")
	}
}

// Closing the tracer closes its connection to the collector: nothing is
// left open for the idle timeout.
func TestClosingTheTracerClosesItsConnection(t *testing.T) {
	closed := make(chan struct{}, 10)
	var mu sync.Mutex
	served := map[net.Conn]bool{} // not the tracer's probe, which only dials
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch st {
		case http.StateActive:
			served[c] = true
		case http.StateClosed:
			if served[c] {
				closed <- struct{}{}
			}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	tr, err := OpenURL(srv.URL+"/v1/traces", nil, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now().Add(-time.Second)
	tr.Emit(Span{Trace: TraceOf("closing"), ID: SpanOf("closing"), Name: "s", Start: began, End: began})
	tr.Close()
	if n, err := tr.Dropped(); n != 0 {
		t.Fatalf("%d spans dropped: %v", n, err)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the collector's connection is still open 5 s after the tracer closed")
	}
}

// A real Jaeger takes a gzipped export, and its UI's port is told from its
// collector's.
func TestJaegerTakesAGzippedExport(t *testing.T) {
	t.Parallel()
	j := jaegertest.Start(t)
	c, err := newOTLPHTTP(j.OTLP+"/v1/traces", nil, env("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"))
	if err != nil {
		t.Fatal(err)
	}
	out := &logged{SpanExporter: otlpExporter{c}, url: j.OTLP}
	tr := New(out, false)
	tr.out = out
	id := TraceOf("gzipped")
	began := time.Now().Add(-time.Second)
	tr.Emit(Span{Trace: id, ID: SpanOf("root"), Name: "invoke_agent codex", Start: began, End: began.Add(time.Millisecond)},
		Span{Trace: id, ID: SpanOf("child"), Parent: SpanOf("root"), Name: "turn 1", Start: began, End: began.Add(time.Millisecond)})
	tr.Close()
	if n, err := tr.Dropped(); n != 0 {
		t.Fatalf("%d spans dropped: %v", n, err)
	}
	spans, err := j.Trace(t.Context(), id.String(), "zwarm", 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != 2 {
		t.Errorf("Jaeger has %d spans of the trace, want 2", len(spans))
	}
	// Its query port answers any path with its UI's page: an export sent
	// there is said to have gone nowhere.
	if err := upload(t, j.Query+"/v1/traces", env(), someSpans("s")); err == nil || !strings.Contains(err.Error(), "web page") {
		t.Errorf("an export to Jaeger's query port: %v, want it refused as a web page", err)
	}
}

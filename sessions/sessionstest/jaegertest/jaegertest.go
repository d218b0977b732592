// Package jaegertest runs a real Jaeger (its cmd/jaeger program, built from
// the tools module in .ci/tools) for tests that send traces and read them
// back through Jaeger's query API: one process per test, in memory, on
// ports of its own. The program is built into .tools/jaeger the first time
// a test needs it; where it cannot be, the test is skipped, except in CI
// (CI=true), where that is a failure.
package jaegertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Version is the Jaeger the tools module pins.
const Version = "v1.76.0"

// BinEnv names a Jaeger binary to use instead of building one.
const BinEnv = "ZWARM_JAEGER_BIN"

// UIEnv names a directory of Jaeger's UI, built from the jaeger-ui
// repository (its packages/jaeger-ui/build). The program's Go module holds
// no UI (its page says "ui assets not embedded"), so a test that looks at
// the UI needs one given.
const UIEnv = "ZWARM_JAEGER_UI"

// Jaeger is a running Jaeger.
type Jaeger struct {
	// OTLP is its OTLP/HTTP base URL (traces go to OTLP+"/v1/traces").
	OTLP string
	// Query is its query service and UI.
	Query string
	// UI says its UI is served (UIEnv), not its placeholder.
	UI  bool
	log string
}

var built struct {
	once sync.Once
	bin  string
	err  error
}

// Start starts a Jaeger for t, stopped when t ends.
func Start(t testing.TB) *Jaeger {
	t.Helper()
	built.once.Do(func() { built.bin, built.err = binary() })
	if built.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("jaeger unavailable: %v", built.err)
		}
		t.Skipf("jaeger unavailable (CI=true makes this a failure): %v", built.err)
	}
	ui := os.Getenv(UIEnv)
	if ui != "" {
		if _, err := os.Stat(filepath.Join(ui, "index.html")); err != nil {
			t.Fatalf("%s=%s is not a built Jaeger UI: %v", UIEnv, ui, err)
		}
	}
	// The ports are free when chosen, not when Jaeger binds them: another
	// process may take one in between (at load, it happens), and Jaeger
	// then exits. It is started again on others.
	var err error
	for range 5 {
		var j *Jaeger
		if j, err = launch(t, ui); err == nil {
			return j
		}
		if !errors.Is(err, errExited) {
			break
		}
	}
	t.Fatalf("jaeger did not start: %v", err)
	return nil
}

// quick asks whether Jaeger is ready: a port another process holds may
// never answer.
var quick = &http.Client{Timeout: 2 * time.Second}

// errExited is a Jaeger that exited before it was ready.
var errExited = errors.New("jaeger exited")

// launch starts a Jaeger on ports free a moment before, stopped when t
// ends, and waits until it is ready.
func launch(t testing.TB, ui string) (*Jaeger, error) {
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, []byte(config(ports, ui)), 0o600); err != nil {
		t.Fatal(err)
	}
	j := &Jaeger{OTLP: fmt.Sprintf("http://127.0.0.1:%d", ports[0]), Query: fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		UI: ui != "", log: filepath.Join(dir, "jaeger.log")}
	out, err := os.Create(j.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(built.bin, "--config", "file:"+cfg)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("start jaeger: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			// It keeps nothing worth a longer wait: its traces are in memory.
			cmd.Process.Kill()
			<-done
		}
		out.Close()
	})
	if err := j.ready(time.Minute, done); err != nil {
		log, _ := os.ReadFile(j.log)
		return nil, fmt.Errorf("%w\n%s", err, log)
	}
	return j, nil
}

// config is a Jaeger that keeps traces in memory, takes OTLP over HTTP on
// ports[0] and answers queries on ports[1] (HTTP) and ports[2] (gRPC),
// serving the UI in dir ui if one is given.
func config(ports []int, ui string) string {
	assets := ""
	if ui != "" {
		assets = fmt.Sprintf("    ui:\n      assets_path: %q\n", ui)
	}
	return fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
%s  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`, ports[1], ports[2], assets, ports[0])
}

// ready waits until the query service answers and the OTLP port listens,
// while the process runs (done is closed when it exits). It is asked
// again after: a port another process holds answers too, while Jaeger
// fails to bind it and exits.
func (j *Jaeger) ready(limit time.Duration, done <-chan struct{}) error {
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-done:
			return errExited
		default:
		}
		resp, err := quick.Get(j.Query + "/api/services")
		if err == nil {
			resp.Body.Close()
			if c, err := net.Dial("tcp", strings.TrimPrefix(j.OTLP, "http://")); err == nil {
				c.Close()
				select {
				case <-done:
					return errExited
				case <-time.After(100 * time.Millisecond):
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %v", limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePorts chooses n ports free a moment before (a variable, for the
// test that takes one of them first).
var freePorts = func(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Span is a span as Jaeger's query API returns it.
type Span struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	StartTime int64 `json:"startTime"` // µs since the epoch
	Duration  int64 `json:"duration"`  // µs
	Tags      []Tag `json:"tags"`
	Logs      []struct {
		Timestamp int64 `json:"timestamp"`
		Fields    []Tag `json:"fields"`
	} `json:"logs"`
	ProcessID string   `json:"processID"`
	Warnings  []string `json:"warnings"`
	// Service is the service.name of the process that sent it.
	Service string `json:"-"`
}

// Tag is an attribute.
type Tag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Parent is the span's parent's id, "" for a root.
func (s Span) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Tag is the value of the span's attribute key, as text; ok is false
// when it has none.
func (s Span) Tag(key string) (string, bool) {
	for _, t := range s.Tags {
		if t.Key == key {
			return fmt.Sprint(t.Value), true
		}
	}
	return "", false
}

// Trace reads trace id back, waiting until it has at least want spans of
// service (all services: "") and no more arrive for a moment (spans are
// sent in batches, by several processes), at most limit. It returns them
// all.
func (j *Jaeger) Trace(ctx context.Context, id, service string, want int, limit time.Duration) ([]Span, error) {
	deadline := time.Now().Add(limit)
	var last []Span
	stable := 0
	for {
		spans, err := j.trace(ctx, id)
		if err == nil && count(spans, service) >= want && len(spans) == len(last) {
			if stable++; stable >= 3 {
				return spans, nil
			}
		} else {
			stable = 0
		}
		last = spans
		if time.Now().After(deadline) {
			return last, fmt.Errorf("trace %s has %d spans of %q after %s, want at least %d (last error: %v)", id, count(last, service), service, limit, want, err)
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func count(spans []Span, service string) int {
	n := 0
	for _, s := range spans {
		if service == "" || s.Service == service {
			n++
		}
	}
	return n
}

func (j *Jaeger) trace(ctx context.Context, id string) ([]Span, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", j.Query+"/api/traces/"+id, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Data []struct {
			Spans     []Span `json:"spans"`
			Processes map[string]struct {
				ServiceName string `json:"serviceName"`
			} `json:"processes"`
		} `json:"data"`
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("query %s: %s: %w", id, resp.Status, err)
	}
	var out []Span
	for _, d := range body.Data {
		for _, sp := range d.Spans {
			sp.Service = d.Processes[sp.ProcessID].ServiceName
			out = append(out, sp)
		}
	}
	return out, nil
}

// binary is the Jaeger to run: BinEnv's, else the one built from the tools
// module, built now if it is not yet.
func binary() (string, error) {
	if b := os.Getenv(BinEnv); b != "" {
		return b, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".tools", "jaeger")
	bin := filepath.Join(dir, "jaeger-"+Version)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Several test binaries may build at once: one does, the others wait.
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", err
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	tmp := bin + ".new"
	cmd := exec.CommandContext(ctx, "go", "build", "-C", filepath.Join(root, ".ci", "tools"), "-o", tmp, "github.com/jaegertracing/jaeger/cmd/jaeger")
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build jaeger %s (go build -C .ci/tools): %v\n%s", Version, err, out)
	}
	return bin, os.Rename(tmp, bin)
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, ".ci", "tools", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no .ci/tools/go.mod above %s: run the tests in zwarm's repository", dir)
		}
		dir = parent
	}
}

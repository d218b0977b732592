package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/zwarm/zwarm/sessions/config"
)

// FlushLimit is the longest Close waits for spans still queued: a
// collector that is down never holds a command up for longer.
const FlushLimit = 2 * time.Second

// Tracer sends spans. A nil Tracer is telemetry off: every method does
// nothing.
type Tracer struct {
	tp      *sdktrace.TracerProvider
	tr      trace.Tracer
	content bool
	// URL is where the spans go, with Headers (never logged).
	URL     string
	Headers map[string]string
	out     *logged
	reach   *reach
}

// LogsURL is the collector's logs URL beside URL, "" when URL is not the
// usual .../v1/traces.
func (t *Tracer) LogsURL() string {
	if t == nil || !strings.HasSuffix(t.URL, "/v1/traces") {
		return ""
	}
	return strings.TrimSuffix(t.URL, "/v1/traces") + "/v1/logs"
}

// Open starts a tracer for the telemetry in force in c, or returns nil when
// it is off.
func Open(c *config.Config, log *slog.Logger) (*Tracer, error) {
	set, url, err := c.Telemetry()
	if err != nil || url == "" {
		return nil, err
	}
	return OpenURL(url, set.Headers, set.Content, log)
}

// OpenURL starts a tracer that sends to the OTLP/HTTP traces URL url.
func OpenURL(url string, headers map[string]string, content bool, log *slog.Logger) (*Tracer, error) {
	client, err := newOTLPHTTP(url, headers, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	// Shutting the exporter down closes its idle connection, with the
	// tracer.
	out := &logged{SpanExporter: otlpExporter{client}, log: log, url: client.shown}
	t := New(out, content)
	t.URL, t.Headers, t.out, t.reach = url, headers, out, newReach(url)
	return t, nil
}

// New is a tracer that hands its spans to exp in batches (an in-memory
// exporter, in tests).
func New(exp sdktrace.SpanExporter, content bool) *Tracer {
	version := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	// The SDK reports a failed export to a global handler that prints on
	// stderr, a person's terminal: logged has said it in the log.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	res := resource.NewSchemaless(attribute.String("service.name", "zwarm"), attribute.String("service.version", version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithIDGenerator(fixedIDs{}),
		sdktrace.WithBatcher(exp, sdktrace.WithMaxQueueSize(4096), sdktrace.WithBatchTimeout(time.Second), sdktrace.WithExportTimeout(exportTimeout)))
	return &Tracer{tp: tp, tr: tp.Tracer("github.com/zwarm/zwarm"), content: content}
}

// Content says prompts, messages and output may be exported.
func (t *Tracer) Content() bool { return t != nil && t.content }

// Emit sends spans.
func (t *Tracer) Emit(spans ...Span) {
	if t == nil {
		return
	}
	if !t.reach.up() {
		t.out.refused(len(spans))
		return
	}
	for _, s := range spans {
		t.emit(s)
	}
}

func (t *Tracer) emit(s Span) {
	ctx := context.WithValue(context.Background(), idsKey{}, ids{s.Trace, s.ID})
	if s.Parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: s.Trace, SpanID: s.Parent, TraceFlags: trace.FlagsSampled, Remote: true}))
	}
	opts := []trace.SpanStartOption{trace.WithTimestamp(s.Start), trace.WithSpanKind(s.Kind), trace.WithAttributes(s.Attrs...)}
	for _, l := range s.Links {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: l}))
	}
	_, sp := t.tr.Start(ctx, s.Name, opts...)
	for _, ev := range s.Events {
		sp.AddEvent(ev.Name, trace.WithTimestamp(ev.Time), trace.WithAttributes(ev.Attrs...))
	}
	if s.Error != "" {
		sp.SetAttributes(ErrorType.String(s.Error))
		sp.SetStatus(codes.Error, s.Error)
	}
	end := s.End
	if end.Before(s.Start) {
		end = s.Start
	}
	sp.End(trace.WithTimestamp(end))
}

// Flush sends what is queued, waiting at most FlushLimit.
func (t *Tracer) Flush() {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), FlushLimit)
	defer cancel()
	t.tp.ForceFlush(ctx)
}

// Send sends every span emitted so far and waits, until ctx ends, for the
// collector to take or refuse them: it returns how many spans the
// collector has taken since the tracer opened, and why the rest did not
// go (the last refusal, else ctx's error while an export still waited for
// an answer). For a command whose work is the sending (zwarm trace);
// everything else sends in the background and never waits.
func (t *Tracer) Send(ctx context.Context) (taken int64, err error) {
	if t == nil {
		return 0, nil
	}
	ferr := t.tp.ForceFlush(ctx)
	_, err = t.Dropped()
	if err == nil && ferr != nil {
		err = fmt.Errorf("no answer from %s: %w", t.out.url, ferr)
	}
	return t.out.taken.Load(), err
}

// SendLimit is how long Send is worth waiting: one export's own bound,
// and a moment.
const SendLimit = exportTimeout + time.Second

// Dropped is how many spans the collector did not take, and why the last
// did not go.
func (t *Tracer) Dropped() (int64, error) {
	if t == nil || t.out == nil {
		return 0, nil
	}
	t.out.mu.Lock()
	defer t.out.mu.Unlock()
	return t.out.dropped.Load(), t.out.last
}

// Close sends what is queued, waiting at most FlushLimit, and stops.
func (t *Tracer) Close() {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), FlushLimit)
	defer cancel()
	// A collector that takes the connection and never answers fails no
	// export before this wait ends: its spans go unsaid unless said here.
	if err := t.tp.Shutdown(ctx); err != nil && t.out != nil && t.out.log != nil && !t.out.failing.Load() {
		t.out.log.Warn("telemetry: spans dropped: the collector did not answer in time", "url", t.out.url, "wait", FlushLimit, "err", err)
	}
	t.reach.wait()
}

// fixedIDs gives each span the ids its Span says (carried by the context
// Emit starts it with): ids are derived from the records, not drawn.
type fixedIDs struct{}

type idsKey struct{}

type ids struct {
	trace trace.TraceID
	span  trace.SpanID
}

func (fixedIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	v, _ := ctx.Value(idsKey{}).(ids)
	return v.trace, v.span
}

func (fixedIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	v, _ := ctx.Value(idsKey{}).(ids)
	return v.span
}

// logged says in the log when spans could not be sent: once when it starts
// failing and once when it works again, never its headers.
type logged struct {
	sdktrace.SpanExporter
	log     *slog.Logger
	url     string
	failing atomic.Bool
	dropped atomic.Int64
	taken   atomic.Int64
	mu      sync.Mutex
	last    error
}

// refused counts n spans dropped unbuilt: the collector refuses
// connections.
func (l *logged) refused(n int) {
	total := l.dropped.Add(int64(n))
	l.mu.Lock()
	l.last = fmt.Errorf("%s refuses connections", l.url)
	l.mu.Unlock()
	if !l.failing.Swap(true) && l.log != nil {
		l.log.Warn("telemetry: spans dropped: the collector refuses connections", "url", l.url, "spans", total)
	}
}

func (l *logged) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := l.SpanExporter.ExportSpans(ctx, spans)
	if err != nil {
		l.mu.Lock()
		l.last = err
		l.mu.Unlock()
	}
	if err != nil {
		n := l.dropped.Add(int64(len(spans)))
		if !l.failing.Swap(true) && l.log != nil {
			l.log.Warn("telemetry: spans dropped: the collector did not take them", "url", l.url, "spans", n, "err", err)
		}
		return err
	}
	l.taken.Add(int64(len(spans)))
	if l.failing.Swap(false) && l.log != nil {
		l.log.Info("telemetry: the collector takes spans again", "url", l.url, "dropped", l.dropped.Load())
	}
	return nil
}

package telemetry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// sdkClient keeps what the SDK's own OTLP exporter would send.
type sdkClient struct{ got []*tracepb.ResourceSpans }

func (c *sdkClient) Start(context.Context) error { return nil }
func (c *sdkClient) Stop(context.Context) error  { return nil }
func (c *sdkClient) UploadTraces(_ context.Context, s []*tracepb.ResourceSpans) error {
	c.got = append(c.got, s...)
	return nil
}

// everyKindOfSpan is spans with every part OTLP carries: attributes of
// every type, events, links, a remote parent, trace state, statuses,
// kinds, dropped counts, two resources and scopes of each.
func everyKindOfSpan(t *testing.T) []sdktrace.ReadOnlySpan {
	rec := tracetest.NewSpanRecorder()
	limits := sdktrace.NewSpanLimits()
	limits.AttributeCountLimit, limits.EventCountLimit, limits.LinkCountLimit = 12, 2, 2
	limits.AttributePerEventCountLimit, limits.AttributePerLinkCountLimit = 1, 1
	res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "zwarm"), attribute.Int("n", 0))
	other := resource.NewSchemaless(attribute.String("service.name", "other"))
	ctx := context.Background()
	var spans []sdktrace.ReadOnlySpan
	for _, r := range []*resource.Resource{res, other} {
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(r), sdktrace.WithSpanProcessor(rec), sdktrace.WithRawSpanLimits(limits))
		for _, tr := range []trace.Tracer{
			tp.Tracer("github.com/zwarm/zwarm"),
			tp.Tracer("scoped", trace.WithInstrumentationVersion("1.2"), trace.WithSchemaURL("https://example.com/s"),
				trace.WithInstrumentationAttributes(attribute.Bool("b", true))),
		} {
			ts, _ := trace.ParseTraceState("k=v,zw=1")
			parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: TraceOf("t"), SpanID: SpanOf("p"),
				TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
			link := trace.Link{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: TraceOf("l"), SpanID: SpanOf("l")}),
				Attributes: []attribute.KeyValue{attribute.String("a", "1"), attribute.String("dropped", "2")}}
			at := time.Date(2026, 11, 30, 10, 0, 0, 123, time.UTC)
			_, s := tr.Start(trace.ContextWithRemoteSpanContext(ctx, parent), "turn 1", trace.WithSpanKind(trace.SpanKindClient),
				trace.WithTimestamp(at), trace.WithLinks(link, link, link))
			s.SetAttributes(attribute.Bool("f", false), attribute.Bool("t", true), attribute.Int64("zero", 0), attribute.Int64("neg", -3),
				attribute.Float64("f0", 0), attribute.Float64("pi", math.Pi), attribute.String("empty", ""), attribute.String("s", "ünï\x00"),
				attribute.BoolSlice("bs", []bool{true, false}), attribute.Int64Slice("is", []int64{1, -1, math.MaxInt64}),
				attribute.Float64Slice("fs", []float64{0.5, -0}), attribute.StringSlice("ss", []string{"", "x"}),
				attribute.ByteSlice("bytes", []byte{0, 1, 2}), attribute.Slice("mixed", attribute.IntValue(1), attribute.StringValue("two")),
				attribute.Map("m", attribute.String("k", "v"), attribute.Int("n", 2)), attribute.String("over", "the limit"))
			s.AddEvent("dropped")
			s.AddEvent("")
			s.AddEvent("last", trace.WithTimestamp(at.Add(time.Millisecond)), trace.WithAttributes(attribute.Int("i", 1), attribute.Int("j", 2)))
			s.SetStatus(codes.Error, "it failed")
			s.End(trace.WithTimestamp(at.Add(time.Second)))

			_, s = tr.Start(ctx, "", trace.WithSpanKind(trace.SpanKindServer))
			s.SetStatus(codes.Ok, "")
			s.End()
			for _, k := range []trace.SpanKind{trace.SpanKindUnspecified, trace.SpanKindInternal, trace.SpanKindProducer, trace.SpanKindConsumer} {
				_, s = tr.Start(ctx, fmt.Sprint("kind ", k), trace.WithSpanKind(k))
				s.End()
			}
		}
	}
	for _, s := range rec.Ended() {
		spans = append(spans, s)
	}
	if len(spans) != 24 {
		t.Fatalf("%d spans made", len(spans))
	}
	return spans
}

// What zwarm encodes is what the SDK's own OTLP exporter sends, as OTLP's
// own types decode it: every field, in every kind of span.
func TestTheEncodingIsTheSDKExportersOwn(t *testing.T) {
	spans := everyKindOfSpan(t)
	sdk := &sdkClient{}
	exp, err := otlptrace.New(context.Background(), sdk)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	var got coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(exportRequest(spans), &got); err != nil {
		t.Fatalf("zwarm's encoding does not decode as an ExportTraceServiceRequest: %v", err)
	}
	want := &coltracepb.ExportTraceServiceRequest{ResourceSpans: sdk.got}
	// The SDK's exporter gathers resources in a map: their order is any.
	byResource := func(rs []*tracepb.ResourceSpans) {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Resource.String() < rs[j].Resource.String() })
	}
	byResource(got.ResourceSpans)
	byResource(want.ResourceSpans)
	if !proto.Equal(&got, want) {
		t.Fatalf("zwarm encodes\n%v\nthe SDK's exporter\n%v", &got, want)
	}
	if n := len(got.ResourceSpans); n != 2 || len(got.ResourceSpans[0].ScopeSpans) != 2 {
		t.Fatalf("%d resources, want 2 of 2 scopes each: %v", n, &got)
	}
	if s := got.ResourceSpans[1].ScopeSpans[0].Spans[0]; len(s.Attributes) != 12 || s.DroppedAttributesCount != 4 || s.DroppedEventsCount != 1 ||
		s.DroppedLinksCount != 1 || s.Events[1].DroppedAttributesCount != 1 || s.Links[0].DroppedAttributesCount != 1 {
		t.Errorf("the limits dropped nothing the test can see: %d attributes, dropped %d attributes %d events %d links, event %d, link %d", len(s.Attributes), s.DroppedAttributesCount, s.DroppedEventsCount, s.DroppedLinksCount, s.Events[1].DroppedAttributesCount, s.Links[0].DroppedAttributesCount)
	}
	if exportRequest(nil) != nil || exportRequest([]sdktrace.ReadOnlySpan{nil}) != nil {
		t.Error("no spans encode as something")
	}
}

// A collector's answer that is not protobuf is said to be none, whatever
// its bytes.
func TestAnAnswerThatIsNotProtobufIsSaidToBeNone(t *testing.T) {
	whole, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{
		PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 2, ErrorMessage: "spans too old"}})
	if err := partialSuccess(whole); err == nil {
		t.Fatal("a partial success was read as none")
	}
	for i := range whole {
		if err := partialSuccess(whole[:i]); err != nil && !errors.Is(err, errNotOTLPAnswer) && err.Error() == "" {
			t.Errorf("cut at %d: %v", i, err)
		}
	}
	for _, b := range [][]byte{{0xff}, {0x0a, 0x05, 0x01}, {0x0b}, {0x00, 0x01}, {0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		if err := partialSuccess(b); !errors.Is(err, errNotOTLPAnswer) {
			t.Errorf("%x: %v, want it not taken for an answer", b, err)
		}
	}
}

// A string that is not UTF-8 (an agent's output cut in the middle of a
// rune) is sent with U+FFFD in its place: a protobuf string must be
// UTF-8, and a collector refuses the whole batch over one that is not.
func TestStringsThatAreNotUTF8AreSentMended(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	_, s := tp.Tracer("zwarm").Start(context.Background(), "turn \xff1")
	s.SetAttributes(attribute.String("output", "caf\xc3"), attribute.StringSlice("lines", []string{"ok", "\xe2\x82"}))
	s.AddEvent("cut \xf0\x9f")
	s.SetStatus(codes.Error, "exit \xfe")
	s.End()
	var spans []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		spans = append(spans, s)
	}
	var got coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(exportRequest(spans), &got); err != nil {
		t.Fatalf("a span with strings that are not UTF-8 is not a valid request: %v", err)
	}
	sp := got.ResourceSpans[0].ScopeSpans[0].Spans[0]
	attrs := map[string]string{}
	for _, kv := range sp.Attributes {
		attrs[kv.Key] = fmt.Sprint(kv.Value)
	}
	if sp.Name != "turn \uFFFD1" || sp.Events[0].Name != "cut \uFFFD" || sp.Status.Message != "exit \uFFFD" ||
		!strings.Contains(attrs["output"], "caf\uFFFD") || !strings.Contains(attrs["lines"], "\uFFFD") {
		t.Fatalf("mended as %v", sp)
	}
}

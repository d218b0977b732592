package telemetry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TraceOf is the trace id of the run or session id: its 16 bytes, so that
// the trace is found by the id people already have.
func TraceOf(id string) trace.TraceID {
	var t trace.TraceID
	b, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
	if err != nil || len(b) != len(t) {
		sum := sha256.Sum256([]byte(id))
		b = sum[:len(t)]
	}
	copy(t[:], b)
	return t
}

// SpanOf is the id of the span that stands for parts (a kind and the ids
// that name it): the same in every process that names it.
func SpanOf(parts ...any) trace.SpanID {
	h := sha256.New()
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			h.Write([]byte(v))
		case int:
			h.Write([]byte(strconv.Itoa(v)))
		}
		h.Write([]byte{0})
	}
	var s trace.SpanID
	copy(s[:], h.Sum(nil))
	if !s.IsValid() {
		s[7] = 1
	}
	return s
}

// Context is ctx carrying the span (trace, span) as its parent, as a
// tool call's handler passes its span to the sessions it starts.
func Context(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{TraceID: t, SpanID: s, TraceFlags: trace.FlagsSampled}))
}

// Parent is the W3C traceparent of the span ctx carries, "" for none:
// what a session records of the call that started it.
func Parent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// ParseParent reads a traceparent; ok is false for "" or a malformed one.
func ParseParent(tp string) (sc trace.SpanContext, ok bool) {
	if tp == "" {
		return sc, false
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
	sc = trace.SpanContextFromContext(ctx)
	return sc, sc.IsValid()
}

// TraceParent is the traceparent of the span (t, s), for an agent that
// nests its own spans under it (TRACEPARENT in its environment).
func TraceParent(t trace.TraceID, s trace.SpanID) string {
	return "00-" + t.String() + "-" + s.String() + "-01"
}

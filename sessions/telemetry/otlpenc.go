package telemetry

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// exportRequest is the protobuf of an ExportTraceServiceRequest of the
// spans, as the SDK's OTLP exporter builds it: the spans of each resource,
// by instrumentation scope, in the order they came.
func exportRequest(spans []sdktrace.ReadOnlySpan) []byte {
	type scoped struct {
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	type resourced struct {
		of     sdktrace.ReadOnlySpan // the first of its spans, for the resource
		scopes []*scoped
	}
	var order []*resourced
	byResource := map[attribute.Distinct]*resourced{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		k := s.Resource().Equivalent()
		r := byResource[k]
		if r == nil {
			r = &resourced{of: s}
			byResource[k] = r
			order = append(order, r)
		}
		var sc *scoped
		for _, c := range r.scopes {
			if c.scope == s.InstrumentationScope() {
				sc = c
			}
		}
		if sc == nil {
			sc = &scoped{scope: s.InstrumentationScope()}
			r.scopes = append(r.scopes, sc)
		}
		sc.spans = append(sc.spans, s)
	}
	var b []byte
	for _, r := range order {
		b = appendMessage(b, 1, func(b []byte) []byte { // resource_spans
			if res := r.of.Resource(); res != nil {
				b = appendMessage(b, 1, func(b []byte) []byte { // resource
					for it := res.Iter(); it.Next(); {
						b = appendKeyValue(b, 1, it.Attribute())
					}
					return b
				})
			}
			for _, sc := range r.scopes {
				b = appendMessage(b, 2, func(b []byte) []byte { // scope_spans
					if sc.scope != (instrumentation.Scope{}) {
						b = appendMessage(b, 1, func(b []byte) []byte { // scope
							b = appendString(b, 1, sc.scope.Name)
							b = appendString(b, 2, sc.scope.Version)
							for it := sc.scope.Attributes.Iter(); it.Next(); {
								b = appendKeyValue(b, 3, it.Attribute())
							}
							return b
						})
					}
					for _, s := range sc.spans {
						b = appendMessage(b, 2, func(b []byte) []byte { return appendSpan(b, s) })
					}
					return appendString(b, 3, sc.scope.SchemaURL)
				})
			}
			return appendString(b, 3, r.of.Resource().SchemaURL())
		})
	}
	return b
}

// appendSpan is the body of an OTLP Span.
func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	b = appendString(b, 3, sc.TraceState().String())
	if p := s.Parent().SpanID(); p.IsValid() {
		b = appendBytes(b, 4, p[:])
	}
	b = appendString(b, 5, s.Name())
	b = appendUint(b, 6, uint64(spanKind(s.SpanKind())))
	b = appendFixed64(b, 7, unixNano(s.StartTime().UnixNano()))
	b = appendFixed64(b, 8, unixNano(s.EndTime().UnixNano()))
	for _, kv := range s.Attributes() {
		b = appendKeyValue(b, 9, kv)
	}
	b = appendUint(b, 10, count(s.DroppedAttributes()))
	for _, e := range s.Events() {
		b = appendMessage(b, 11, func(b []byte) []byte {
			b = appendFixed64(b, 1, unixNano(e.Time.UnixNano()))
			b = appendString(b, 2, e.Name)
			for _, kv := range e.Attributes {
				b = appendKeyValue(b, 3, kv)
			}
			return appendUint(b, 4, count(e.DroppedAttributeCount))
		})
	}
	b = appendUint(b, 12, count(s.DroppedEvents()))
	for _, l := range s.Links() {
		b = appendMessage(b, 13, func(b []byte) []byte {
			tid, sid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = appendBytes(b, 1, tid[:])
			b = appendBytes(b, 2, sid[:])
			for _, kv := range l.Attributes {
				b = appendKeyValue(b, 4, kv)
			}
			b = appendUint(b, 5, count(l.DroppedAttributeCount))
			return appendFixed32(b, 6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		})
	}
	b = appendUint(b, 14, count(s.DroppedLinks()))
	st := s.Status()
	b = appendMessage(b, 15, func(b []byte) []byte {
		b = appendString(b, 2, st.Description)
		return appendUint(b, 3, uint64(statusCode(st.Code)))
	})
	return appendFixed32(b, 16, spanFlags(sc.TraceFlags(), s.Parent()))
}

// appendKeyValue is a KeyValue field: the attribute's key and value.
func appendKeyValue(b []byte, num int, kv attribute.KeyValue) []byte {
	return appendMessage(b, num, func(b []byte) []byte {
		b = appendString(b, 1, string(kv.Key))
		return appendMessage(b, 2, func(b []byte) []byte { return appendAnyValue(b, kv.Value) })
	})
}

// appendAnyValue is the body of an AnyValue: one member of its oneof,
// there even when it is zero (none for an empty value).
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		x := uint64(0)
		if v.AsBool() {
			x = 1
		}
		return appendOneofVarint(b, 2, x)
	case attribute.INT64:
		return appendOneofVarint(b, 3, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return appendDouble(b, 4, v.AsFloat64())
	case attribute.STRING:
		return appendBytes(b, 1, []byte(validUTF8(v.AsString())))
	case attribute.BYTESLICE:
		return appendBytes(b, 7, v.AsByteSlice())
	case attribute.BOOLSLICE:
		return appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		return appendArray(b, v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		return appendMessage(b, 6, func(b []byte) []byte {
			for _, kv := range v.AsMap() {
				b = appendKeyValue(b, 1, kv)
			}
			return b
		})
	case attribute.EMPTY:
		return b
	}
	return appendBytes(b, 1, []byte("INVALID"))
}

// appendArray is an AnyValue's array member: an AnyValue of each of s.
func appendArray[T any](b []byte, s []T, value func(T) attribute.Value) []byte {
	return appendMessage(b, 5, func(b []byte) []byte {
		for _, x := range s {
			b = appendMessage(b, 1, func(b []byte) []byte { return appendAnyValue(b, value(x)) })
		}
		return b
	})
}

// appendOneofVarint is a varint member of a oneof: there even when 0.
func appendOneofVarint(b []byte, num int, x uint64) []byte {
	return appendVarint(appendTag(b, num, wireVarint), x)
}

// spanKind is OTLP's Span.SpanKind of k.
func spanKind(k trace.SpanKind) int {
	switch k {
	case trace.SpanKindInternal:
		return 1
	case trace.SpanKindServer:
		return 2
	case trace.SpanKindClient:
		return 3
	case trace.SpanKindProducer:
		return 4
	case trace.SpanKindConsumer:
		return 5
	}
	return 0
}

// statusCode is OTLP's Status.StatusCode of c.
func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

// spanFlags are OTLP's span flags: the W3C trace flags, and whether the
// parent is known to be remote (SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK,
// SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK).
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | 0x100
	if parent.IsRemote() {
		f |= 0x200
	}
	return f
}

func unixNano(ns int64) uint64 { return uint64(max(0, ns)) }

func count(n int) uint64 { return uint64(min(max(int64(n), 0), math.MaxUint32)) }

package telemetry

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"unicode/utf8"
)

// The protobuf wire format, as far as an OTLP export needs it: zwarm
// encodes its ExportTraceServiceRequest and reads a collector's answer
// itself. The protobuf runtime and OTLP's generated types, which the
// SDK's exporter would link, cost every zwarm command a quarter of a
// millisecond at start (docs/performance.md), telemetry on or off;
// their field numbers are OTLP's, in otlpenc.go, and the tests check
// what is encoded here against the SDK's own encoding.

// The wire types used.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func appendTag(b []byte, num, typ int) []byte {
	return binary.AppendUvarint(b, uint64(num)<<3|uint64(typ))
}

// appendUint is a varint field, left out when 0, as proto3 leaves it.
func appendUint(b []byte, num int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.AppendUvarint(appendTag(b, num, wireVarint), v)
}

// appendFixed64 is a fixed64 field, left out when 0.
func appendFixed64(b []byte, num int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint64(appendTag(b, num, wireFixed64), v)
}

// appendFixed32 is a fixed32 field, left out when 0.
func appendFixed32(b []byte, num int, v uint32) []byte {
	if v == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint32(appendTag(b, num, wireFixed32), v)
}

// appendBytes is a length-delimited field, always there: a message set,
// or a member of a oneof.
func appendBytes(b []byte, num int, v []byte) []byte {
	b = binary.AppendUvarint(appendTag(b, num, wireBytes), uint64(len(v)))
	return append(b, v...)
}

// appendString is a string field, left out when empty.
func appendString(b []byte, num int, s string) []byte {
	if s == "" {
		return b
	}
	s = validUTF8(s)
	b = binary.AppendUvarint(appendTag(b, num, wireBytes), uint64(len(s)))
	return append(b, s...)
}

// appendMessage is a message field, set (there even when empty): what
// enc appends is its body.
func appendMessage(b []byte, num int, enc func([]byte) []byte) []byte {
	return appendBytes(b, num, enc(nil))
}

// appendDouble is a double in a oneof: there even when 0.
func appendDouble(b []byte, num int, v float64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, num, wireFixed64), math.Float64bits(v))
}

var errNotOTLPAnswer = errors.New("the collector's answer is not an ExportTraceServiceResponse")

// eachField calls fn with each field of the message b: its bytes for a
// length-delimited field, its value for a varint.
func eachField(b []byte, fn func(num, typ int, v []byte, x uint64) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 || key>>3 == 0 || key>>3 > math.MaxInt32 {
			return errNotOTLPAnswer
		}
		b = b[n:]
		num, typ := int(key>>3), int(key&7)
		var v []byte
		var x uint64
		switch typ {
		case wireVarint:
			x, n = binary.Uvarint(b)
		case wireFixed64:
			n = 8
		case wireFixed32:
			n = 4
		case wireBytes:
			var l uint64
			l, n = binary.Uvarint(b)
			if n > 0 && l <= uint64(len(b)-n) {
				v, n = b[n:n+int(l)], n+int(l)
			} else {
				n = -1
			}
		default: // groups, which OTLP never uses
			n = -1
		}
		if n <= 0 || n > len(b) {
			return errNotOTLPAnswer
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

func appendVarint(b []byte, x uint64) []byte { return binary.AppendUvarint(b, x) }

// validUTF8 is s with each run of bytes that are not UTF-8 made U+FFFD: a
// protobuf string must be UTF-8, and a collector refuses the whole batch
// over one that is not (an agent's output, cut in the middle of a rune).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

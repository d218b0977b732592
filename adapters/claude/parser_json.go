package claude

import (
	"bytes"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// The parser reads a line with jsontext, the tokenizer of encoding/json/v2,
// in one pass: it validates the line as it walks it, reads only the
// members its event needs and skips the others without decoding them,
// and copies out only the strings the event keeps. What it reads, it
// reads as encoding/json would, which was the parser before this one:
//
//   - strings decode to the same bytes: escapes, surrogate pairs, and
//     U+FFFD for each invalid UTF-8 byte and each lone surrogate;
//   - a known field of the wrong JSON type makes the line raw (encoding/json
//     refused it), null leaves a field as it was, and of duplicate keys the
//     last one wins (an object or array given twice is decoded over the
//     first, entry by entry);
//   - keys match exactly: encoding/json's case-insensitive fallback
//     ("Type" for "type") is not kept, no agent prints such keys.
//
// A line is read first as valid UTF-8 (strictOpts), which agents print,
// so that its strings need no second look at their bytes when they are
// copied out; only a line that fails so is read again as encoding/json
// would read it.

// decodeOpts make jsontext accept what encoding/json accepts: invalid
// UTF-8 in strings and duplicate keys. Its nesting limit is encoding/json's.
var decodeOpts = []jsontext.Options{jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)}

// strictOpts accept only strings of valid UTF-8 whose \u escapes of
// surrogates come in pairs: decoding such a string is decoding its
// escapes (see decode).
var strictOpts = []jsontext.Options{jsontext.AllowDuplicateNames(true)}

// scanner walks one JSON text. The values it returns are views into the
// text: raw JSON, strings still quoted. Once the text has a syntax error
// it is bad and reads nothing more. A field of a type its Go field could
// not take is a mismatch: it is skipped, and the walk goes on, as
// encoding/json goes on to report the first such error at the end.
type scanner struct {
	dec      jsontext.Decoder
	src      bytes.Buffer // the text: jsontext reads a bytes.Buffer in place
	in       []byte
	name     []byte // the last name read, when it had escapes
	bad      bool
	mismatch bool
	// utf8 says that the line s started last is being read with
	// strictOpts or on the fast path; reading values within it leaves it
	// as it is.
	utf8 bool
	fast bool // the line is walked by hand (parser_fast.go), not by dec
	f    fastState
}

// startFast starts reading a line on the fast path. A line it cannot read
// must be read again with start before it is judged.
func (s *scanner) startFast(line []byte) {
	s.in, s.bad, s.mismatch, s.utf8, s.fast = line, false, false, true, true
	s.f = fastState{stack: s.f.stack[:0]}
}

// start starts reading a line: with strictOpts if strict, else as
// encoding/json would. A line that fails strictly must be read again
// leniently before it is judged.
func (s *scanner) start(line []byte, strict bool) {
	s.utf8 = strict
	if strict {
		s.open(line, strictOpts)
	} else {
		s.open(line, decodeOpts)
	}
}

// reset starts reading b, a value within the line s read, or a text of
// its own.
func (s *scanner) reset(b []byte) { s.open(b, decodeOpts) }

func (s *scanner) open(b []byte, opts []jsontext.Options) {
	s.in, s.bad, s.mismatch, s.fast = b, false, false, false
	s.src = *bytes.NewBuffer(b)
	s.dec.Reset(&s.src, opts...)
}

// text is the decoded string of the raw JSON value, a value of the line s
// started last, copied out of the line; "" for anything that is not a
// string.
func (s *scanner) text(raw []byte) string { return decode(raw, s.utf8) }

// kind is the kind of the next value: '"', '0' (number), 'n', 't', 'f',
// '{', '[', or 0 for a syntax error.
func (s *scanner) kind() jsontext.Kind {
	if s.bad {
		return 0
	}
	if s.fast {
		return s.fkind()
	}
	return s.dec.PeekKind()
}

// value reads the next value whole, validating it, and returns it as it
// stands in the text.
func (s *scanner) value() []byte {
	if s.bad {
		return nil
	}
	if s.fast {
		return s.fvalue()
	}
	v, err := s.dec.ReadValue()
	if err != nil {
		s.bad = true
		return nil
	}
	// Sliced from the text by offset, the value does not depend on the
	// decoder's buffer.
	end := int(s.dec.InputOffset())
	return s.in[end-len(v) : end : end]
}

// skip reads over the next value.
func (s *scanner) skip() { s.value() }

// enter reads the bracket that opens the next object or array.
func (s *scanner) enter() {
	if s.fast {
		s.fenter()
		return
	}
	if _, err := s.dec.ReadToken(); err != nil {
		s.bad = true
	}
}

// more reports whether the object or array being read has one more
// member or entry; if not, it reads the closing bracket.
func (s *scanner) more() bool {
	switch s.kind() {
	case '}', ']':
		s.enter()
		return false
	case 0:
		s.bad = true
		return false
	}
	return true
}

// member reads the name of the next member of an object, decoded. The
// name is valid until the next call.
func (s *scanner) member() string {
	raw := s.value()
	if len(raw) < 2 {
		return ""
	}
	raw = raw[1 : len(raw)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return view(raw)
	}
	s.name = append(s.name[:0], unquote(view(raw))...)
	return view(s.name)
}

// done reports whether the text was one valid JSON value and nothing
// more.
func (s *scanner) done() bool {
	if s.bad {
		return false
	}
	if s.fast {
		return s.fdone()
	}
	_, err := s.dec.ReadToken()
	return err == io.EOF
}

// wrongType skips a value of the wrong type for its field.
func (s *scanner) wrongType() {
	s.mismatch = true
	s.skip()
}

// valid reports whether b is one JSON value, as encoding/json judges it.
func (s *scanner) valid(b []byte) bool {
	s.reset(b)
	s.skip()
	return s.done()
}

// last is the value of the last member named key of the object raw, a
// valid value, or nil: of duplicate keys encoding/json keeps the last.
func (s *scanner) last(raw []byte, key string) []byte {
	if !isObject(raw) {
		return nil
	}
	var v []byte
	s.reset(raw)
	s.enter()
	for s.more() {
		if s.member() == key {
			v = s.value()
		} else {
			s.skip()
		}
	}
	return v
}

// str reads a string field; null leaves dst as it was.
func (s *scanner) str(dst *[]byte) {
	switch s.kind() {
	case '"':
		*dst = s.value()
	case 'n':
		s.skip()
	default:
		s.wrongType()
	}
}

// int64 reads an integer field; a fraction or an exponent is a type error,
// as in encoding/json.
func (s *scanner) int64(dst *int64) {
	switch s.kind() {
	case '0':
		n, err := strconv.ParseInt(view(s.value()), 10, 64)
		if err != nil {
			s.mismatch = true
			return
		}
		*dst = n
	case 'n':
		s.skip()
	default:
		s.wrongType()
	}
}

// optInt64 is int64 for a pointer field: null unsets it.
func (s *scanner) optInt64(dst *int64, set *bool) {
	switch s.kind() {
	case 'n':
		s.skip()
		*dst, *set = 0, false
	case '0':
		*set = true
		s.int64(dst)
	default:
		s.wrongType()
	}
}

func (s *scanner) boolean(dst *bool) {
	switch s.kind() {
	case 't', 'f':
		*dst = s.kind() == 't'
		s.skip()
	case 'n':
		s.skip()
	default:
		s.wrongType()
	}
}

// object reports whether the next value is an object to decode into a
// pointer field whose presence is *set, and if so enters it. null unsets
// the field; a field that was unset starts from zero, one that was set is
// merged into (duplicate keys).
func (s *scanner) object(set *bool) (decode, fresh bool) {
	switch s.kind() {
	case '{':
		fresh = !*set
		*set = true
		s.enter()
		return true, fresh
	case 'n':
		s.skip()
		*set = false
	default:
		s.wrongType()
	}
	return false, false
}

// array reports whether the next value is an array to decode into a slice
// field, and if so enters it; null and a type error leave nothing to
// decode.
func (s *scanner) array() bool {
	switch s.kind() {
	case '[':
		s.enter()
		return true
	case 'n':
		s.skip()
	default:
		s.wrongType()
	}
	return false
}

// entry reports whether the next array entry is an object to decode, and
// if so enters it; null is read over and leaves the entry as it was.
func (s *scanner) entry() bool {
	switch s.kind() {
	case '{':
		s.enter()
		return true
	case 'n':
		s.skip()
	default:
		s.wrongType()
	}
	return false
}

// Package jsonscan reads agents' JSON output lines for the adapters'
// parsers: one pass over a line, reading only the members an event needs
// and skipping the others without decoding them, copying out only the
// strings the event keeps. What it reads, it reads as encoding/json would
// (each adapter's FuzzMatchesEncodingJSON holds its parser to that):
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
// Scanner.Line reads a line first on the fast path (fast.go), by hand,
// which takes nearly every line an agent prints; then with jsontext, the
// tokenizer of encoding/json/v2, as valid UTF-8 (strictOpts), so that its
// strings need no second look at their bytes when they are copied out;
// and only a line that fails both is read as encoding/json would read it.
package jsonscan

import (
	"bytes"
	"io"
	"iter"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// decodeOpts make jsontext accept what encoding/json accepts: invalid
// UTF-8 in strings and duplicate keys. Its nesting limit is encoding/json's.
var decodeOpts = []jsontext.Options{jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)}

// strictOpts accept only strings of valid UTF-8 whose \u escapes of
// surrogates come in pairs: decoding such a string is decoding its
// escapes (see Decode).
var strictOpts = []jsontext.Options{jsontext.AllowDuplicateNames(true)}

// Scanner walks one JSON text. The values it returns are views into the
// Text: raw JSON, strings still quoted. Once the text has a syntax error
// it is bad and reads nothing more. A field of a type its Go field could
// not take is a mismatch: it is skipped, and the walk goes on, as
// encoding/json goes on to report the first such error at the end.
type Scanner struct {
	dec      jsontext.Decoder
	src      bytes.Buffer // the text: jsontext reads a bytes.Buffer in place
	in       []byte
	name     []byte // the last name read, when it had escapes
	bad      bool
	Mismatch bool
	// utf8 says that the line s started last is being read with
	// strictOpts or on the fast path; reading values within it leaves it
	// as it is.
	utf8 bool
	fast bool // the line is walked by hand (fast.go), not by dec
	f    fastState
}

// Line reads the line b with read: on the fast path, then with jsontext
// as valid UTF-8, then as encoding/json would. read reports false for a
// line that is not valid JSON or has a known field of a type
// encoding/json would have refused; so does Line once every way has.
func (s *Scanner) Line(b []byte, read func(*Scanner) bool) bool {
	s.StartFast(b)
	if read(s) {
		return true
	}
	s.Start(b, true)
	if read(s) {
		return true
	}
	// Invalid UTF-8 or a lone surrogate, or a line encoding/json would not
	// decode either.
	s.Start(b, false)
	return read(s)
}

// ValidUTF8 reports whether the line being read is known to be valid
// UTF-8, so that its strings need no second look at their bytes.
func (s *Scanner) ValidUTF8() bool { return s.utf8 }

// StartFast starts reading a line on the fast path. A line it cannot read
// must be read again with start before it is judged.
func (s *Scanner) StartFast(line []byte) {
	s.in, s.bad, s.Mismatch, s.utf8, s.fast = line, false, false, true, true
	s.f = fastState{stack: s.f.stack[:0]}
}

// Start starts reading a line: with strictOpts if strict, else as
// encoding/json would. A line that fails strictly must be read again
// leniently before it is judged.
func (s *Scanner) Start(line []byte, strict bool) {
	s.utf8 = strict
	if strict {
		s.open(line, strictOpts)
	} else {
		s.open(line, decodeOpts)
	}
}

// Reset starts reading b, a value within the line s read, or a text of
// its own.
func (s *Scanner) Reset(b []byte) { s.open(b, decodeOpts) }

func (s *Scanner) open(b []byte, opts []jsontext.Options) {
	s.in, s.bad, s.Mismatch, s.fast = b, false, false, false
	s.src = *bytes.NewBuffer(b)
	s.dec.Reset(&s.src, opts...)
}

// Text is the decoded string of the raw JSON value, a value of the line s
// started last, copied out of the line; "" for anything that is not a
// string.
func (s *Scanner) Text(raw []byte) string { return Decode(raw, s.utf8) }

// Kind is the kind of the next value: '"', '0' (number), 'n', 't', 'f',
// '{', '[', or 0 for a syntax error.
func (s *Scanner) Kind() jsontext.Kind {
	if s.bad {
		return 0
	}
	if s.fast {
		return s.fkind()
	}
	return s.dec.PeekKind()
}

// Value reads the next value whole, validating it, and returns it as it
// stands in the text.
func (s *Scanner) Value() []byte {
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

// Skip reads over the next value.
func (s *Scanner) Skip() { s.Value() }

// Enter reads the bracket that opens the next object or array.
func (s *Scanner) Enter() {
	if s.fast {
		s.fenter()
		return
	}
	if _, err := s.dec.ReadToken(); err != nil {
		s.bad = true
	}
}

// More reports whether the object or array being read has one more
// Member or entry; if not, it reads the closing bracket.
func (s *Scanner) More() bool {
	switch s.Kind() {
	case '}', ']':
		s.Enter()
		return false
	case 0:
		s.bad = true
		return false
	}
	return true
}

// Member reads the name of the next member of an object, decoded. The
// name is valid until the next call.
func (s *Scanner) Member() string {
	raw := s.Value()
	if len(raw) < 2 {
		return ""
	}
	raw = raw[1 : len(raw)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return View(raw)
	}
	s.name = append(s.name[:0], Unquote(View(raw))...)
	return View(s.name)
}

// Done reports whether the text was one valid JSON value and nothing
// More.
func (s *Scanner) Done() bool {
	if s.bad {
		return false
	}
	if s.fast {
		return s.fdone()
	}
	_, err := s.dec.ReadToken()
	return err == io.EOF
}

// WrongType skips a value of the wrong type for its field.
func (s *Scanner) WrongType() {
	s.Mismatch = true
	s.Skip()
}

// Valid reports whether b is one JSON value, as encoding/json judges it.
func (s *Scanner) Valid(b []byte) bool {
	s.Reset(b)
	s.Skip()
	return s.Done()
}

// Last is the value of the last member named key of the object raw, a
// Valid value, or nil: of duplicate keys encoding/json keeps the last.
func (s *Scanner) Last(raw []byte, key string) []byte {
	if !IsObject(raw) {
		return nil
	}
	var v []byte
	s.Reset(raw)
	s.Enter()
	for s.More() {
		if s.Member() == key {
			v = s.Value()
		} else {
			s.Skip()
		}
	}
	return v
}

// Str reads a string field; null leaves dst as it was.
func (s *Scanner) Str(dst *[]byte) {
	switch s.Kind() {
	case '"':
		*dst = s.Value()
	case 'n':
		s.Skip()
	default:
		s.WrongType()
	}
}

// Int64 reads an integer field; a fraction or an exponent is a type error,
// as in encoding/json.
func (s *Scanner) Int64(dst *int64) {
	switch s.Kind() {
	case '0':
		n, err := strconv.ParseInt(View(s.Value()), 10, 64)
		if err != nil {
			s.Mismatch = true
			return
		}
		*dst = n
	case 'n':
		s.Skip()
	default:
		s.WrongType()
	}
}

// OptInt64 is int64 for a pointer field: null unsets it.
func (s *Scanner) OptInt64(dst *int64, set *bool) {
	switch s.Kind() {
	case 'n':
		s.Skip()
		*dst, *set = 0, false
	case '0':
		*set = true
		s.Int64(dst)
	default:
		s.WrongType()
	}
}

func (s *Scanner) Boolean(dst *bool) {
	switch s.Kind() {
	case 't', 'f':
		*dst = s.Kind() == 't'
		s.Skip()
	case 'n':
		s.Skip()
	default:
		s.WrongType()
	}
}

// Object reports whether the next value is an object to decode into a
// pointer field whose presence is *set, and if so enters it. null unsets
// the field; a field that was unset starts from zero, one that was set is
// merged into (duplicate keys).
func (s *Scanner) Object(set *bool) (decode, fresh bool) {
	switch s.Kind() {
	case '{':
		fresh = !*set
		*set = true
		s.Enter()
		return true, fresh
	case 'n':
		s.Skip()
		*set = false
	default:
		s.WrongType()
	}
	return false, false
}

// Array reports whether the next value is an array to decode into a slice
// field, and if so enters it; null and a type error leave nothing to
// Decode.
func (s *Scanner) Array() bool {
	switch s.Kind() {
	case '[':
		s.Enter()
		return true
	case 'n':
		s.Skip()
	default:
		s.WrongType()
	}
	return false
}

// Entry reports whether the next array entry is an object to decode, and
// if so enters it; null is read over and leaves the entry as it was.
func (s *Scanner) Entry() bool {
	switch s.Kind() {
	case '{':
		s.Enter()
		return true
	case 'n':
		s.Skip()
	default:
		s.WrongType()
	}
	return false
}

// OptFloat64 reads a number into a pointer field: null unsets it, a
// number out of float64's range is a type error, as in encoding/json.
func (s *Scanner) OptFloat64(dst *float64, set *bool) {
	switch s.Kind() {
	case '0':
		n, err := strconv.ParseFloat(View(s.Value()), 64)
		if err != nil {
			s.Mismatch = true
			return
		}
		*dst, *set = n, true
	case 'n':
		s.Skip()
		*dst, *set = 0, false
	default:
		s.WrongType()
	}
}

// Each yields the entries of the array raw, a valid value, as raw JSON;
// nothing if raw is not an array. The loop body must read with another
// Scanner.
func (s *Scanner) Each(raw []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if !IsArray(raw) {
			return
		}
		s.Reset(raw)
		s.Enter()
		for s.More() {
			if !yield(s.Value()) {
				return
			}
		}
	}
}

package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// The fast path. Almost every line an agent prints is plain JSON: valid
// UTF-8, no \u escape of a surrogate, shallow. Such a line is walked here
// by hand, in one pass with no tokenizer state beyond a stack of brackets,
// which is most of the parser's time saved. Anything else (a byte that is
// not valid UTF-8, a surrogate escape, deep nesting, a syntax error) makes
// the fast walk give up, and the line is read again by jsontext as before
// (see Scanner.Line): the fast path only ever accepts lines that jsontext
// reads the same way with strictOpts. FuzzFastPath holds it to that, and
// each adapter's FuzzMatchesEncodingJSON holds the whole parser to
// encoding/json.

const fastMaxDepth = 64 // deeper lines take the jsontext path

// fastState is the fast walk's position in the line's grammar.
type fastState struct {
	pos   int
	stack []byte // '{' or '[' per open container
	// what the next token must be preceded by or be
	comma bool // a value just ended inside a container: ',' or a close next
	colon bool // an object member's name just ended: ':' next
	name  bool // the next value is an object member's name
	value bool // a value must follow (after ':' or ','): no close
	ended bool // the top-level value has ended
}

// ws skips JSON whitespace.
func (s *Scanner) ws() {
	for s.f.pos < len(s.in) {
		switch s.in[s.f.pos] {
		case ' ', '\t', '\n', '\r':
			s.f.pos++
		default:
			return
		}
	}
}

// fpeek reads over the separator the grammar expects next and returns the
// first byte of the next token, or 0 (the line is then bad).
func (s *Scanner) fpeek() byte {
	if s.bad {
		return 0
	}
	f := &s.f
	s.ws()
	if f.colon {
		if f.pos >= len(s.in) || s.in[f.pos] != ':' {
			return s.fail()
		}
		f.pos++
		f.colon, f.value = false, true
		s.ws()
	} else if f.comma {
		if f.pos >= len(s.in) {
			return s.fail()
		}
		switch s.in[f.pos] {
		case ',':
			f.pos++
			f.comma, f.value = false, true
			f.name = f.stack[len(f.stack)-1] == '{'
			s.ws()
		case '}', ']':
		default:
			return s.fail()
		}
	}
	if f.pos >= len(s.in) || f.ended {
		return s.fail()
	}
	return s.in[f.pos]
}

func (s *Scanner) fail() byte {
	s.bad = true
	return 0
}

// fkind is kind on the fast path.
func (s *Scanner) fkind() jsontext.Kind {
	switch c := s.fpeek(); c {
	case '"', 'n', 't', 'f', '{', '[', '}', ']':
		return jsontext.Kind(c)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return '0'
	default:
		return jsontext.Kind(s.fail())
	}
}

// fvalue is value on the fast path: the next value, validated, as it
// stands in the text.
func (s *Scanner) fvalue() []byte {
	c := s.fpeek()
	if c == 0 || c == '}' || c == ']' || s.f.name && c != '"' {
		s.fail()
		return nil
	}
	start := s.f.pos
	if !s.skipValue(len(s.f.stack)) {
		s.fail()
		return nil
	}
	s.afterValue()
	return s.in[start:s.f.pos:s.f.pos]
}

// afterValue sets what must follow a value just read.
func (s *Scanner) afterValue() {
	f := &s.f
	f.value = false
	switch {
	case len(f.stack) == 0:
		f.ended = true
	case f.name:
		f.name, f.colon = false, true
	default:
		f.comma = true
	}
}

// fenter is enter on the fast path: an opening or closing bracket.
func (s *Scanner) fenter() {
	c := s.fpeek()
	f := &s.f
	switch c {
	case '{', '[':
		if f.name || len(f.stack) >= fastMaxDepth {
			s.fail()
			return
		}
		f.pos++
		f.stack = append(f.stack, c)
		f.value, f.comma = false, false
		f.name = c == '{'
	case '}', ']':
		if f.value || len(f.stack) == 0 || f.stack[len(f.stack)-1] != c-2 { // '{'+2 == '}', '['+2 == ']'
			s.fail()
			return
		}
		f.pos++
		f.stack = f.stack[:len(f.stack)-1]
		f.name = false
		s.afterValue()
	default:
		s.fail()
	}
}

// fdone is done on the fast path.
func (s *Scanner) fdone() bool {
	s.ws()
	return !s.bad && s.f.ended && s.f.pos == len(s.in)
}

// skipValue reads over one value at s.f.pos, nested depth deep, and
// reports whether it was valid.
func (s *Scanner) skipValue(depth int) bool {
	in, i := s.in, s.f.pos
	if i >= len(in) {
		return false
	}
	switch c := in[i]; {
	case c == '"':
		end, ok := skipString(in, i)
		s.f.pos = end
		return ok
	case c == '{' || c == '[':
		if depth >= fastMaxDepth {
			return false
		}
		close := c + 2
		s.f.pos = i + 1
		s.ws()
		if s.f.pos < len(in) && in[s.f.pos] == close {
			s.f.pos++
			return true
		}
		for {
			if c == '{' {
				if s.f.pos >= len(in) || in[s.f.pos] != '"' {
					return false
				}
				end, ok := skipString(in, s.f.pos)
				if !ok {
					return false
				}
				s.f.pos = end
				s.ws()
				if s.f.pos >= len(in) || in[s.f.pos] != ':' {
					return false
				}
				s.f.pos++
				s.ws()
			}
			if !s.skipValue(depth + 1) {
				return false
			}
			s.ws()
			if s.f.pos >= len(in) {
				return false
			}
			switch in[s.f.pos] {
			case ',':
				s.f.pos++
				s.ws()
			case close:
				s.f.pos++
				return true
			default:
				return false
			}
		}
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	default:
		end, ok := skipNumber(in, i)
		s.f.pos = end
		return ok
	}
}

func (s *Scanner) literal(lit string) bool {
	if len(s.in)-s.f.pos < len(lit) || string(s.in[s.f.pos:s.f.pos+len(lit)]) != lit {
		return false
	}
	s.f.pos += len(lit)
	return true
}

// skipNumber reads over the JSON number at in[i:]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(in []byte, i int) (int, bool) {
	digits := func() bool {
		start := i
		for i < len(in) && in[i] >= '0' && in[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(in) && in[i] == '-' {
		i++
	}
	switch {
	case i < len(in) && in[i] == '0':
		i++
	case !digits():
		return i, false
	}
	if i < len(in) && in[i] == '.' {
		i++
		if !digits() {
			return i, false
		}
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		if !digits() {
			return i, false
		}
	}
	return i, true
}

// plainByte marks the bytes a string may hold as they are: not a quote, a
// backslash, a control character or a byte of a multi-byte character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// special8 marks the high bit of each byte of x (as little-endian) that
// is not plainByte (at or above 0x80, below 0x20, a quote or a
// backslash), and perhaps of bytes after the first such. Each test is the
// classic one for a zero byte, or a byte below a bound, in a word: a
// borrow runs only upwards from a byte that is, so the lowest mark is
// exact and says where the first one is, and no mark means none is.
func special8(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	below20 := (x - 0x20*ones) & ^x & highs
	return (x & highs) | below20 | zero(x^('"'*ones)) | zero(x^('\\'*ones))
}

// skipString reads over the string whose opening quote is at in[i],
// returning the index after its closing quote. It accepts only what
// jsontext accepts with strictOpts and decode then turns into the same
// Text: valid UTF-8, valid escapes, and no \u escape of a surrogate (those
// take the jsontext path).
func skipString(in []byte, i int) (int, bool) {
	i++
	for i < len(in) {
		// Eight bytes at a time, where there are, to the first one that is
		// not plain.
		for i+8 <= len(in) {
			m := special8(binary.LittleEndian.Uint64(in[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(in) {
			break
		}
		c := in[i]
		if plainByte[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(in) {
				return i, false
			}
			switch in[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(in) {
					return i, false
				}
				r := rune(0)
				for _, h := range in[i+2 : i+6] {
					switch {
					case h >= '0' && h <= '9':
						r = r<<4 | rune(h-'0')
					case h >= 'a' && h <= 'f':
						r = r<<4 | rune(h-'a'+10)
					case h >= 'A' && h <= 'F':
						r = r<<4 | rune(h-'A'+10)
					default:
						return i, false
					}
				}
				if r >= 0xd800 && r <= 0xdfff {
					return i, false // a surrogate: the jsontext path pairs them
				}
				i += 6
			default:
				return i, false
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				return i, false
			}
			i += size
		default: // a control character
			return i, false
		}
	}
	return i, false
}

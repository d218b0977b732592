package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// View is b seen as a string without copying it. It is only used while
// ParseLine runs: what an event keeps is copied out by text.
func View(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func IsObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }
func IsArray(raw []byte) bool  { return len(raw) > 0 && raw[0] == '[' }
func IsString(raw []byte) bool { return len(raw) > 0 && raw[0] == '"' }

// Text is the decoded string of the raw JSON value, copied out of the
// line; "" for anything that is not a string.
func Text(raw []byte) string { return Decode(raw, false) }

// Decode is text. valid says that the string is valid UTF-8 and its \u
// escapes of surrogates come in pairs, so that only its escapes need
// decoding.
func Decode(raw []byte, valid bool) string {
	if !IsString(raw) {
		return ""
	}
	in := raw[1 : len(raw)-1]
	if plain(in, valid) {
		return string(in)
	}
	return unescape(View(in), valid)
}

// Peek is text without the copy when the string has no escapes: a view
// into the line, to compare and never keep.
func Peek(raw []byte) string {
	if !IsString(raw) {
		return ""
	}
	in := raw[1 : len(raw)-1]
	if plain(in, false) {
		return View(in)
	}
	return Unquote(View(in))
}

// WriteText writes the decoded string raw to b; valid is decode's.
func WriteText(b *strings.Builder, raw []byte, valid bool) {
	if !IsString(raw) {
		return
	}
	in := raw[1 : len(raw)-1]
	if plain(in, valid) {
		b.Write(in)
		return
	}
	b.WriteString(unescape(View(in), valid))
}

// plain reports whether the inside of a string literal decodes to itself:
// no escapes, valid UTF-8; valid is decode's.
func plain(in []byte, valid bool) bool {
	return bytes.IndexByte(in, '\\') < 0 && (valid || utf8.Valid(in))
}

// Unquote decodes the inside of a valid JSON string literal exactly as
// encoding/json does, including its coercion of invalid UTF-8 and of lone
// surrogates to U+FFFD.
func Unquote(s string) string { return unescape(s, false) }

// unescape is unquote; valid is decode's.
func unescape(s string, valid bool) string {
	b := appendUnescaped(make([]byte, 0, len(s)), s, valid)
	// Nothing else holds b: the string can have its bytes.
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// appendUnescaped appends the decoded string s to b. Command output is
// full of escapes (newlines, tabs, quotes, colour codes): the text between
// two of them is copied whole.
func appendUnescaped(b []byte, s string, valid bool) []byte {
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 {
			return appendUTF8(b, s, valid)
		}
		if valid {
			b = append(b, s[:i]...)
		} else {
			b = appendUTF8(b, s[:i], false)
		}
		c := s[i+1]
		s = s[i+2:]
		switch c {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hex4(s)
			s = s[4:]
			if utf16.IsSurrogate(r) {
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					if dec := utf16.DecodeRune(r, hex4(s[2:])); dec != utf8.RuneError {
						b = utf8.AppendRune(b, dec)
						s = s[6:]
						continue
					}
				}
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
		default: // '"', '\\', '/'
			b = append(b, c)
		}
	}
}

// appendUTF8 appends s with each byte that is not valid UTF-8 as U+FFFD;
// Valid says there is none.
func appendUTF8(b []byte, s string, valid bool) []byte {
	if valid || utf8.ValidString(s) {
		return append(b, s...)
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

// hex4 reads the four hex digits of a \u escape, which validation has
// checked.
func hex4(s string) rune {
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// Compact renders a raw JSON value on one line, "" for null or nothing, as
// agent.CompactJSON does.
func Compact(raw []byte) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

package claude

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// The parser reads a line with gjson: it validates the line, then walks
// only the objects its event needs, without building a tree, and copies
// out only the strings the event keeps. What it reads, it reads as
// encoding/json would, which was the parser before this one:
//
//   - strings decode to the same bytes: escapes, surrogate pairs, and
//     U+FFFD for each invalid UTF-8 byte and each lone surrogate;
//   - a known field of the wrong JSON type makes the line raw (encoding/json
//     refused it), null leaves a field as it was, and of duplicate keys the
//     last one wins (an object or array given twice is decoded over the
//     first, entry by entry);
//   - keys match exactly: encoding/json's case-insensitive fallback
//     ("Type" for "type") is not kept, no agent prints such keys.

// maxNesting is encoding/json's limit of nesting depth.
const maxNesting = 10000

// validJSON reports whether b is one JSON value, as encoding/json judges
// it. gjson's validator recurses once per level, so a line with more
// brackets than encoding/json would ever nest goes to encoding/json's own
// validator, which refuses deep nesting instead of exhausting the stack.
func validJSON(b []byte) bool {
	if len(b) > maxNesting && bytes.Count(b, []byte{'{'})+bytes.Count(b, []byte{'['}) > maxNesting {
		return json.Valid(b)
	}
	return gjson.ValidBytes(b)
}

// view is b seen as a string without copying it. It, and every gjson
// result taken from it, is only used while ParseLine runs: what an event
// keeps is copied out by text.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func isObject(v gjson.Result) bool { return v.Type == gjson.JSON && v.Raw[0] == '{' }
func isArray(v gjson.Result) bool  { return v.Type == gjson.JSON && v.Raw[0] == '[' }

// fields assigns decoded values to a line's fields and remembers whether
// one had a JSON type its Go field could not take.
type fields struct{ bad bool }

// str keeps a string value; null leaves dst as it was.
func (f *fields) str(dst *gjson.Result, v gjson.Result) {
	switch v.Type {
	case gjson.String:
		*dst = v
	case gjson.Null:
	default:
		f.bad = true
	}
}

// int64 keeps an integer; a fraction or an exponent is a type error, as
// in encoding/json.
func (f *fields) int64(dst *int64, v gjson.Result) {
	switch v.Type {
	case gjson.Number:
		n, err := strconv.ParseInt(v.Raw, 10, 64)
		if err != nil {
			f.bad = true
			return
		}
		*dst = n
	case gjson.Null:
	default:
		f.bad = true
	}
}

// optInt64 is int64 for a pointer field: null unsets it.
func (f *fields) optInt64(dst *int64, set *bool, v gjson.Result) {
	if v.Type == gjson.Null {
		*dst, *set = 0, false
		return
	}
	if v.Type == gjson.Number {
		*set = true
	}
	f.int64(dst, v)
}

func (f *fields) boolean(dst *bool, v gjson.Result) {
	switch v.Type {
	case gjson.True, gjson.False:
		*dst = v.Type == gjson.True
	case gjson.Null:
	default:
		f.bad = true
	}
}

// object reports whether v is an object to decode into a pointer field
// whose presence is *set. null unsets the field; a field that was unset
// starts from zero, one that was set is merged into (duplicate keys).
func (f *fields) object(v gjson.Result, set *bool) (decode, fresh bool) {
	switch {
	case isObject(v):
		fresh = !*set
		*set = true
		return true, fresh
	case v.Type == gjson.Null:
		*set = false
	default:
		f.bad = true
	}
	return false, false
}

// array reports whether v is an array to decode into a slice field; null
// and a type error leave nothing to decode.
func (f *fields) array(v gjson.Result) bool {
	switch {
	case isArray(v):
		return true
	case v.Type != gjson.Null:
		f.bad = true
	}
	return false
}

// text is the decoded string v, copied out of the line; "" for anything
// that is not a string.
func text(v gjson.Result) string {
	if v.Type != gjson.String {
		return ""
	}
	raw := v.Raw[1 : len(v.Raw)-1]
	if !exact(v) {
		return unquote(raw)
	}
	if len(v.Str) == len(raw) {
		// No escapes: gjson's string is the line itself.
		return strings.Clone(raw)
	}
	return v.Str
}

// writeText writes the decoded string v to b.
func writeText(b *strings.Builder, v gjson.Result) {
	if v.Type != gjson.String {
		return
	}
	if !exact(v) {
		b.WriteString(unquote(v.Raw[1 : len(v.Raw)-1]))
		return
	}
	b.WriteString(v.Str)
}

// exact reports whether gjson's decoding of the string v is the one
// encoding/json gives. It is unless the string holds invalid UTF-8 (which
// gjson keeps) or \u escapes of lone surrogates (which gjson turns into
// U+FFFD, as encoding/json does, but may take the next escape with it):
// either leaves gjson's result invalid UTF-8 or holding U+FFFD.
func exact(v gjson.Result) bool {
	return utf8.ValidString(v.Str) && !strings.Contains(v.Str, "\uFFFD")
}

// last is the value of the last key named key in object v, the one
// encoding/json keeps.
func last(v gjson.Result, key string) gjson.Result {
	var out gjson.Result
	if isObject(v) {
		v.ForEach(func(k, v gjson.Result) bool {
			if k.Str == key {
				out = v
			}
			return true
		})
	}
	return out
}

// unquote decodes the inside of a valid JSON string literal exactly as
// encoding/json does, including its coercion of invalid UTF-8 and of lone
// surrogates to U+FFFD.
func unquote(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			i++
			switch s[i] {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r := hex4(s[i+1:])
				i += 5
				if utf16.IsSurrogate(r) {
					if len(s) >= i+6 && s[i] == '\\' && s[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, hex4(s[i+2:])); dec != utf8.RuneError {
							b.WriteRune(dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b.WriteRune(r)
				continue
			default: // '"', '\\', '/'
				b.WriteByte(s[i])
			}
			i++
		case c < utf8.RuneSelf:
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf && s[j] != '\\' {
				j++
			}
			b.WriteString(s[i:j])
			i = j
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
		}
	}
	return b.String()
}

// hex4 reads the four hex digits of a \u escape, which validation has
// checked.
func hex4(s string) rune {
	n, _ := strconv.ParseUint(s[:4], 16, 16)
	return rune(n)
}

// compact renders a JSON value on one line, "" for null or nothing, as
// sessions.CompactJSON does.
func compact(v gjson.Result) string {
	if v.Raw == "" || v.Type == gjson.Null {
		return ""
	}
	var buf bytes.Buffer
	buf.Grow(len(v.Raw))
	if json.Compact(&buf, []byte(v.Raw)) != nil {
		return strings.Clone(v.Raw)
	}
	return buf.String()
}

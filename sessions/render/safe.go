package render

import (
	"encoding/binary"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/zwarm/zwarm/sessions/record"
)

// Safe makes text that came from an agent or a user harmless on a terminal:
// control characters (ESC, BEL, CR, the C1 range, ...) and the Unicode
// characters that reorder, hide or break text (bidi overrides, zero-width
// spaces, line separators; the joiners that scripts and emoji need are
// kept) are shown escaped, as \x1b or \u202e, and invalid UTF-8 becomes
// U+FFFD. Newlines and tabs are kept. A message carrying "ESC[2J" cannot
// clear the screen or retitle the terminal once it has been through Safe.
// Output meant for programs (--raw, --json) never goes through it.
func Safe(s string) string {
	if isSafe(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case unsafeRune(r):
			b.WriteString(escapeRune(r))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// SafeLine is Safe for text shown on one line: newlines and tabs are
// escaped too.
func SafeLine(s string) string {
	if printableASCII(s) {
		return s // the common case, in one pass
	}
	s = Safe(s)
	if strings.IndexByte(s, '\n') < 0 && strings.IndexByte(s, '\t') < 0 {
		return s
	}
	return lineBreaks.Replace(s)
}

func isSafe(s string) bool {
	ascii := true
	i := 0
	// Eight bytes at a time while they are all printable ASCII (or a
	// newline or tab): nearly all of an agent's text.
	for ; i+8 <= len(s); i += 8 {
		if !printable8(binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))) {
			break
		}
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
		} else if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return ascii || utf8.ValidString(s) && !hasUnsafeUnicode(s)
}

// printable8 says whether the eight bytes of x (as little-endian) are all
// printable ASCII, a newline or a tab: none at or above 0x7f, and none
// below 0x20 but those two. The tests are the classic ones for a byte
// below a bound, or equal to one, in a word; exact for whether there is any.
func printable8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	if (x&highs)|zero(x^(0x7f*ones)) != 0 {
		return false
	}
	if (x-0x20*ones)&^x&highs == 0 {
		return true // no byte below 0x20
	}
	// Some byte is below 0x20: all right only if each such is \n or \t.
	for range 8 {
		if c := byte(x); c < 0x20 && c != '\n' && c != '\t' {
			return false
		}
		x >>= 8
	}
	return true
}

func hasUnsafeUnicode(s string) bool {
	for _, r := range s {
		if r >= 0x80 && unsafeRune(r) {
			return true
		}
	}
	return false
}

// unsafeRune reports the runes a terminal acts on instead of printing
// (C0 and C1 controls, DEL), and those that change how text reads without
// being seen (record.Invisible).
func unsafeRune(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || record.Invisible(r)
}

func escapeRune(r rune) string {
	switch {
	case r < 0x100:
		return `\x` + leftPad(strconv.FormatInt(int64(r), 16), 2)
	case r > 0xffff:
		return `\U` + leftPad(strconv.FormatInt(int64(r), 16), 8)
	}
	return `\u` + leftPad(strconv.FormatInt(int64(r), 16), 4)
}

func leftPad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}

// lineBreaks is built once: a Replacer per call cost more than the rest of
// a listing row.
var lineBreaks = strings.NewReplacer("\n", `\n`, "\t", `\t`)

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// SGRLen is the length of the SGR sequence s starts with, 0 if none.
func SGRLen(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s) && i < 64; i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c >= '0' && c <= '9', c == ';', c == ':':
		default:
			return 0
		}
	}
	return 0
}

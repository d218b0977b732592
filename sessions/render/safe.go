package render

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Safe makes text that came from an agent or a user harmless on a terminal:
// control characters (ESC, BEL, CR, the C1 range, ...) and the Unicode
// controls that reorder or hide text (bidi overrides, zero-width joiners are
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
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
		} else if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return ascii || utf8.ValidString(s) && !hasUnsafeUnicode(s)
}

func hasUnsafeUnicode(s string) bool {
	for _, r := range s {
		if r >= 0x80 && unsafeRune(r) {
			return true
		}
	}
	return false
}

// unsafeRune reports the runes a terminal acts on instead of printing:
// C0 and C1 controls, DEL, and the bidirectional formatting characters that
// make text display differently from what it is.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

func escapeRune(r rune) string {
	if r < 0x100 {
		return `\x` + leftPad(strconv.FormatInt(int64(r), 16), 2)
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

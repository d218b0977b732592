package config

import (
	"strings"
	"unicode/utf8"
)

// CheckText refuses text sent to an agent (what: "task", "message") that
// is empty, hint saying what to send instead, or that is not UTF-8: the
// text goes to the agent and into the record as JSON, where bytes that
// are not would become U+FFFD without a word.
func CheckText(what, text, hint string) error {
	if strings.TrimSpace(text) == "" {
		return Invalidf("empty %s: %s", what, hint)
	}
	if !utf8.ValidString(text) {
		i := 0
		for i < len(text) {
			r, n := utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		return Invalidf("the %s is not UTF-8 text (byte %#x at offset %d): send it as UTF-8", what, text[i], i)
	}
	return nil
}

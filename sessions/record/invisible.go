package record

// Invisible reports the characters of a record's text (a task, an agent's
// message, a file name) that change how it reads without being seen: the
// bidirectional formatting characters that make text display otherwise
// than it is; those that show as nothing, so that two names or commands
// that look alike are told apart (zero-width and word-joining spaces, the
// BOM, invisible operators, the soft hyphen, the Hangul fillers, the tag
// characters that can carry text no reader sees); and the line and
// paragraph separators, which some terminals break a line at and others
// do not show. A terminal printer escapes them, a commit message drops
// them: the one list for both.
func Invisible(r rune) bool {
	switch {
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == 0x200b, r >= 0x2060 && r <= 0x2064, r == 0xfeff, r == 0x180e, r == 0x2028, r == 0x2029:
		return true
	case r >= 0xe0000 && r <= 0xe007f, r == 0xad, r == 0x3164, r == 0xffa0, r == 0x115f, r == 0x1160:
		return true
	}
	return false
}

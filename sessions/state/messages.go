package state

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/store"
)

// What zwarm's own commits say: a turn's, and a landing's.

// CommitMessage is the message of the commit that holds what the agent
// left in the worktree at the end of turn n.
func CommitMessage(s *record.Session, n int) string {
	prompt := ""
	if n >= 1 && n <= len(s.Turns) {
		prompt = s.Turns[n-1].Prompt
	}
	return fmt.Sprintf("zwarm %s turn %d: %s", store.ShortID(s.ID), n, FirstLine(plainText(prompt), 72))
}

// FirstLine is the first line of s, cut to max runes.
func FirstLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// SquashMessage is the message of a squashed landing: the task, then the
// worker's last message (what they hold that would act on a terminal,
// control characters, goes).
func SquashMessage(s *record.Session) string {
	var b strings.Builder
	task := strings.TrimSpace(plainText(s.Task))
	title, rest, _ := strings.Cut(task, "\n")
	b.WriteString(FirstLine(title, 72))
	if r := []rune(strings.TrimSpace(title)); len(r) > 72 {
		rest = task // the title was cut: keep the whole task below it
	}
	if rest = strings.TrimSpace(rest); rest != "" {
		b.WriteString("\n\n" + rest)
	}
	if last := strings.TrimSpace(plainText(s.LastMessage)); last != "" {
		b.WriteString("\n\n" + last)
	}
	fmt.Fprintf(&b, "\n\nZwarm-Session: %s\n", s.ID)
	return b.String()
}

// MergeMessage is the message of a landing's merge commit into branch into.
func MergeMessage(s *record.Session, into string) string {
	return fmt.Sprintf("Merge %s into %s: %s\n\nZwarm-Session: %s\n", s.Workspace.Branch, into, FirstLine(plainText(s.Task), 60), s.ID)
}

// plainText is text an agent or a user wrote without what a terminal
// would act on rather than print, for a commit message, which git log
// prints as it is: escape sequences whole (a title set, a screen
// cleared), other controls (newlines and tabs stay), and the characters
// that reorder or hide text (bidi overrides, zero-width spaces), so that
// the message reads as what it holds.
func plainText(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == 0x1b && i+1 < len(rs):
			i = escapeEnd(rs, i+1)
		case r == 0x9b: // CSI
			i = sequenceEnd(rs, i+1, false)
		case r == 0x9d || r == 0x90 || r == 0x9e || r == 0x9f: // OSC, DCS, PM, APC
			i = sequenceEnd(rs, i+1, true)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == utf8.RuneError || record.Invisible(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// escapeEnd is the index of the last rune of the escape sequence whose
// introducer (the rune after ESC) is at i.
func escapeEnd(rs []rune, i int) int {
	switch rs[i] {
	case '[':
		return sequenceEnd(rs, i+1, false)
	case ']', 'P', '^', '_':
		return sequenceEnd(rs, i+1, true)
	}
	return i // a two-rune sequence
}

// sequenceEnd is the index of the last rune of a sequence whose body
// starts at i: a control sequence ends at its final byte, a string (OSC
// and the like) at BEL or ST (ESC \\); one cut short ends the text.
func sequenceEnd(rs []rune, i int, str bool) int {
	for ; i < len(rs); i++ {
		r := rs[i]
		switch {
		case str && (r == 0x07 || r == 0x9c):
			return i
		case str && r == 0x1b && i+1 < len(rs) && rs[i+1] == '\\':
			return i + 1
		case !str && r >= 0x40 && r <= 0x7e:
			return i
		case r == '\n':
			return i - 1 // a line ends any sequence: the newline stays
		}
	}
	return len(rs) - 1
}

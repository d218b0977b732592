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
	return fmt.Sprintf("zwarm %s turn %d: %s", store.ShortID(s.ID), n, FirstLine(prompt, 72))
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

// plainText drops the control characters of text an agent or a user
// wrote (newlines and tabs stay): a commit message is printed by git log
// as it is.
func plainText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == utf8.RuneError {
			return -1
		}
		return r
	}, s)
}

package state

import (
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
)

// What a task or a worker wrote reaches git's messages without anything
// a terminal would act on: git log prints a message as it is.
func TestCommitMessagesHoldNothingATerminalActsOn(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"fix \x1b]0;PWNED\x07the \x1b[2J\x1b[31mbug\x1b[0m", "fix the bug"},
		{"an OSC ended by ST \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ here", "an OSC ended by ST link here"},
		{"C1: \u009b31mred\u009d0;t\u009c done", "C1: red done"},
		{"\u202eexe.txt and rm\u200b -rf", "exe.txt and rm -rf"},
		{"ok\U000E0069\U000E0067\U000E006E\U000E006F\U000E0072\U000E0065 soft\u00adhyphen\u3164", "ok softhyphen"},
		{"bell\a, back\bspace, \rreturn", "bell, backspace, return"},
		{"a sequence cut short \x1b[31", "a sequence cut short "},
		{"two lines \x1b[1\nsecond", "two lines \nsecond"},
		{"tabs\tand\nnewlines stay, ünïcödé and emoji 👍 too", "tabs\tand\nnewlines stay, ünïcödé and emoji 👍 too"},
	} {
		if got := plainText(c.in); got != c.want {
			t.Errorf("plainText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	s := &record.Session{ID: "3f2a9c1d-0000-4000-8000-000000000000", Task: "ship \x1b[2Jit",
		Turns: []record.Turn{{Prompt: "ship \x1b]0;PWNED\x07it\u202e"}}, Workspace: &record.Workspace{Branch: "zwarm/3f2a9c1d"}}
	for name, msg := range map[string]string{"turn": CommitMessage(s, 1), "squash": SquashMessage(s), "merge": MergeMessage(s, "main")} {
		if strings.ContainsAny(msg, "\x1b\x07\u202e") || strings.Contains(msg, "PWNED") || !strings.Contains(msg, "ship it") {
			t.Errorf("%s message %q", name, msg)
		}
	}
}

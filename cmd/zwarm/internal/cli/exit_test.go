package cli

import (
	"bytes"
	"errors"
	"testing"
)

// An error that carries what someone wrote (serve --addr $'\e[31m...')
// reaches the terminal with its control characters escaped: they were
// printed raw.
func TestAnErrorIsPrintedSafe(t *testing.T) {
	var out bytes.Buffer
	code := ExitCode(Usagef("--addr %s: bad", "\x1b[31mevil\x1b[0m:80"), &Streams{ErrOut: &out})
	if want := "zwarm: --addr \\x1b[31mevil\\x1b[0m:80: bad\n"; code != ExitUsage || out.String() != want {
		t.Fatalf("exit %d, printed %q, want %q", code, out.String(), want)
	}
	out.Reset()
	Interrupted(errors.New("stopped at \x07\x1b]0;title\x07"), &Streams{ErrOut: &out})
	if want := "zwarm: interrupted: stopped at \\x07\\x1b]0;title\\x07\n"; out.String() != want {
		t.Fatalf("printed %q, want %q", out.String(), want)
	}
}

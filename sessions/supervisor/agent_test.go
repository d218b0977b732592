package supervisor

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The supervisor's own pieces, alone. Supervision as a whole (agents,
// follow-ups, kills) is tested in package sessions, which runs this
// package as `zwarm __supervise` and in process.

// The stdin feeder writes what it is given in order and closes the pipe
// after the last, without blocking its caller on a reader that is slow.
func TestStdinFeederDeliversInOrderThenCloses(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := newStdinFeeder(w)
	big := bytes.Repeat([]byte("p"), 1<<20) // more than a pipe holds
	s.feed(big)
	s.feed([]byte("\nnext\n"))
	s.closeAfterQueued()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := string(big) + "\nnext\n"; string(got) != want {
		t.Fatalf("read %d bytes, want %d", len(got), len(want))
	}
	if err := s.stop(); err != nil {
		t.Fatalf("stop after a clean close: %v", err)
	}
}

func TestLastLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stderr")
	os.WriteFile(path, []byte(strings.Repeat("noise\n", 2000)+"warning\n\n  Error: bad flag  \nusage: x\n"), 0o600)
	if got, want := lastLines(path, 3), "warning\nError: bad flag\nusage: x"; got != want {
		t.Fatalf("lastLines = %q, want %q", got, want)
	}
	if got := lastLines(filepath.Join(t.TempDir(), "none"), 3); got != "" {
		t.Fatalf("a missing file gives %q", got)
	}
}

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		ws   unix.WaitStatus
		want int
	}{
		{0, 0},
		{1 << 8, 1},
		{unix.WaitStatus(unix.SIGKILL), 137},
		{unix.WaitStatus(unix.SIGTERM), 143},
	} {
		if got := exitCode(tc.ws); got != tc.want {
			t.Errorf("exitCode(%#x) = %d, want %d", uint32(tc.ws), got, tc.want)
		}
	}
}

// A failed turn's error is the agent's error line, not the stack trace
// printed after it (codex with RUST_BACKTRACE set, a Node CLI's throw).
func TestLastLinesLeavesStackTracesOut(t *testing.T) {
	for _, tc := range []struct{ name, stderr, want string }{
		{"rust", "Error: Input exceeds the maximum length of 1048576 characters\n\nStack backtrace:\n" +
			"   0: anyhow::error::<impl anyhow::Error>::msg\n             at ./src/error.rs:83:36\n   1: codex_exec::run_main\n" +
			strings.Repeat("  11: <unknown>\n", 30) + "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n",
			"Error: Input exceeds the maximum length of 1048576 characters"},
		{"node", "starting\nError: ENOENT: no such file or directory, open 'x'\n    at Object.openSync (node:fs:573:18)\n    at main (file:///cli.js:1:2)\n",
			"starting\nError: ENOENT: no such file or directory, open 'x'"},
		{"plain", "one\ntwo\nthree\nfour\n", "two\nthree\nfour"},
		{"only a trace", "   0: f\n   1: g\n", "0: f\n1: g"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "stderr")
			if err := os.WriteFile(path, []byte(tc.stderr), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := lastLines(path, 3); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

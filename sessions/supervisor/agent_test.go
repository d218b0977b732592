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

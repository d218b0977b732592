package shell

import (
	"context"
	"strings"
	"testing"
)

// Truncating a full output buffer to the default budget: the work done per
// call on the output of a chatty command.
func BenchmarkTruncate1MiB(b *testing.B) {
	text := strings.Repeat("a line of build output, with some detail in it\n", bufferLimit/48)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, _, truncated := Truncate(text, DefaultMaxOutputTokens); !truncated {
			b.Fatal("not truncated")
		}
	}
}

// The overhead of one short command, from Exec to its reported exit.
func BenchmarkExecTrue(b *testing.B) {
	for _, tty := range []bool{true, false} {
		name := "pipes"
		if tty {
			name = "pty"
		}
		b.Run(name, func(b *testing.B) {
			m := New(Options{Dir: b.TempDir(), Shell: "/bin/bash"})
			defer m.Close()
			req := ExecRequest{Cmd: "true", Login: ptr(false), TTY: ptr(tty)}
			for b.Loop() {
				r, err := m.Exec(context.Background(), req)
				if err != nil || r.ExitCode == nil {
					b.Fatalf("%v %v", r, err)
				}
			}
		})
	}
}

// Throughput of output through the terminal into the buffer.
func BenchmarkPTYOutput(b *testing.B) {
	m := New(Options{Dir: b.TempDir(), Shell: "/bin/bash"})
	defer m.Close()
	const n = 8 << 20
	b.SetBytes(n)
	req := ExecRequest{Cmd: "head -c 8388608 /dev/zero | tr '\\0' 'x'", Login: ptr(false)}
	for b.Loop() {
		r, err := m.Exec(context.Background(), req)
		if err != nil || r.ExitCode == nil || r.OriginalTokens != n/4 {
			b.Fatalf("%v %v", r, err)
		}
	}
}

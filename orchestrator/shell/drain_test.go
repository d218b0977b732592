package shell

import (
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

// A reader that reaches the pipe only after the drain's deadline still gets
// what the process wrote before it exited: the runtime refuses a read past
// its deadline before looking at the kernel's buffer, so that output would
// otherwise be lost on a busy machine.
func TestLateReaderKeepsBufferedOutput(t *testing.T) {
	t.Parallel()
	for _, tty := range []bool{false, true} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		// 48 KiB fits in the pipe whole, so it is all written before the
		// deadline; it takes several reads of the reader's 32 KiB buffer.
		want := strings.Repeat("0123456789abcdef", 3<<10)
		if _, err := w.WriteString(want); err != nil {
			t.Fatal(err)
		}
		w.Close()
		p := &process{out: r, in: r, tty: tty, buf: newHeadTail(bufferLimit)}
		if err := r.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		p.read(slog.New(slog.DiscardHandler))
		r.Close()
		head, tail, omitted := p.buf.take(false)
		if got := head + tail; got != want || omitted != 0 {
			t.Fatalf("tty=%v: kept %d of %d bytes written before the deadline (omitted %d); want all of them", tty, len(got), len(want), omitted)
		}
	}
}

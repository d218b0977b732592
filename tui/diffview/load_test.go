package diffview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
)

// clip keeps whole lines up to its bounds, says so, and stops the writer
// once, however the output is split into writes.
func TestClipBounds(t *testing.T) {
	var text strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&text, "line %02d\n", i) // 8 bytes a line
	}
	for _, c := range []struct {
		name               string
		maxLines, maxBytes int
		keep               int // lines
		cut                bool
		kept               string
	}{
		{"whole", 100, 1 << 20, 50, false, ""},
		{"exactly the lines", 50, 1 << 20, 50, false, ""},
		{"lines", 10, 1 << 20, 10, true, "the first 10 lines"},
		{"bytes", 100, 8*20 + 3, 20, true, "the first 20 lines (0.0 MB)"},
	} {
		for _, chunk := range []int{1, 3, 8, 1000} {
			t.Run(fmt.Sprintf("%s/%d", c.name, chunk), func(t *testing.T) {
				stops := 0
				w := &clip{maxLines: c.maxLines, maxBytes: c.maxBytes, stop: func() { stops++ }}
				src := text.String()
				for len(src) > 0 {
					n := min(chunk, len(src))
					if k, err := w.Write([]byte(src[:n])); k != n || err != nil {
						t.Fatalf("write %d: %d, %v", n, k, err)
					}
					src = src[n:]
				}
				if w.cut != c.cut || stops != map[bool]int{true: 1}[c.cut] {
					t.Fatalf("cut %v, stopped %d times", w.cut, stops)
				}
				if got := strings.Count(string(w.buf), "\n"); got != c.keep || !strings.HasSuffix(string(w.buf), "\n") {
					t.Fatalf("kept %d lines: %q", got, w.buf)
				}
				if c.cut && w.kept() != c.kept {
					t.Fatalf("kept() %q", w.kept())
				}
			})
		}
	}
}

// A first line longer than the bound is kept in part.
func TestClipOneHugeLine(t *testing.T) {
	w := &clip{maxLines: 10, maxBytes: 100, stop: func() {}}
	w.Write(bytes.Repeat([]byte("x"), 1000))
	if len(w.buf) != 100 || !w.cut {
		t.Fatalf("kept %d bytes, cut %v", len(w.buf), w.cut)
	}
}

// fakeDiff writes its text, in one write or until the context ends.
type fakeDiff struct {
	text string
	err  error
	// stopped says the context was cancelled while writing.
	stopped bool
}

func (f *fakeDiff) Diff(ctx context.Context, id string, out io.Writer, _ sessions.DiffRequest) (*record.Session, error) {
	for _, l := range strings.SplitAfter(f.text, "\n") {
		if ctx.Err() != nil {
			f.stopped = true
			return nil, fmt.Errorf("git diff: %w", ctx.Err())
		}
		out.Write([]byte(l))
	}
	return &record.Session{ID: id}, f.err
}

// Loading stops the diff at the bound and reports no error for it; real
// errors are said, in-place as it is.
func TestLoad(t *testing.T) {
	var big strings.Builder
	for i := range 100 {
		fmt.Fprintf(&big, "+%d\n", i)
	}
	src := &fakeDiff{text: big.String()}
	msg := load(context.Background(), src, "3f2a0001-x", 7, false, 10, 1<<20)
	if !src.stopped || msg.Err != nil || msg.Cut != "the first 10 lines" || len(msg.Lines) != 10 || msg.seq != 7 {
		t.Fatalf("stopped %v, msg %+v", src.stopped, msg)
	}
	inPlace := &sessions.InPlaceError{ID: "3f2a0001-x", Dir: "/w"}
	if msg := load(context.Background(), &fakeDiff{err: inPlace}, "3f2a0001-x", 1, false, 10, 100); msg.Err != error(inPlace) {
		t.Fatalf("in place: %v", msg.Err)
	}
	boom := errors.New("fatal: bad object")
	if msg := load(context.Background(), &fakeDiff{err: boom}, "3f2a0001-x", 1, false, 10, 100); !errors.Is(msg.Err, boom) ||
		msg.Err.Error() != "cannot show the diff of 3f2a0001: fatal: bad object" {
		t.Fatalf("error: %v", msg.Err)
	}
}

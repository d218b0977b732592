package agent

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// cutAll feeds pieces (each ending at a newline or holding none) and
// returns what a turn file records.
func cutAll(c *LineCutter, pieces ...string) string {
	var b strings.Builder
	for _, p := range pieces {
		b.Write(c.Add([]byte(p)))
	}
	b.Write(c.Flush())
	return b.String()
}

func TestLineCutterKeepsLinesAndCutsLongOnes(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes)
	for _, tc := range []struct {
		name   string
		pieces []string
		want   string
	}{
		{"whole lines", []string{"a\n", "b\r\n", "\n"}, "a\nb\r\n\n"},
		{"a line in pieces", []string{"ab", "c", "d\n"}, "abcd\n"},
		{"exactly the limit", []string{long[:10], long[10:] + "\n"}, long + "\n"},
		{"one byte over, in pieces", []string{long, "y", "z\n", "after\n"}, `{"type":"zwarm.truncated","bytes":` + strconv.Itoa(MaxLineBytes+2) + "}\nafter\n"},
		{"one byte over, whole", []string{long + "y\n"}, `{"type":"zwarm.truncated","bytes":` + strconv.Itoa(MaxLineBytes+1) + "}\n"},
		{"held then over", []string{"abc", long + "\n"}, `{"type":"zwarm.truncated","bytes":` + strconv.Itoa(MaxLineBytes+3) + "}\n"},
		{"unterminated last line", []string{"a\n", "tail"}, "a\ntail"},
		{"unterminated and too long", []string{long, "yy"}, `{"type":"zwarm.truncated","bytes":` + strconv.Itoa(MaxLineBytes+2) + "}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c LineCutter
			if got := cutAll(&c, tc.pieces...); got != tc.want {
				t.Fatalf("got %.200q (%d bytes), want %.200q (%d bytes)", got, len(got), tc.want, len(tc.want))
			}
			if c.Pending() != 0 {
				t.Fatalf("left %d bytes pending", c.Pending())
			}
		})
	}
}

// Holding a line of megabytes copies it a few times, not dozens: what the
// supervisor allocates for its agent's longest lines stays near twice the
// longest line kept (doubling's sum), so its memory does not wait on the
// collector.
func TestLineCutterHoldsALongLineInFewCopies(t *testing.T) {
	piece := bytes.Repeat([]byte("z"), 64<<10)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var c LineCutter
	held := 0
	for held+len(piece) < MaxLineBytes {
		c.Add(piece)
		held += len(piece)
	}
	line := c.Add([]byte("\n"))
	runtime.ReadMemStats(&after)
	if len(line) != held+1 {
		t.Fatalf("recorded %d bytes of a %d-byte line", len(line), held+1)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 5*MaxLineBytes/2 {
		t.Fatalf("holding a %d MiB line allocated %d MiB, over 2.5 times MaxLineBytes", held>>20, alloc>>20)
	}
}

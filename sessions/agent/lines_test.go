package agent

import (
	"strings"
	"testing"
)

func split(s *LineSplitter, chunks ...string) []string {
	var out []string
	for _, c := range chunks {
		s.Write([]byte(c), func(b []byte) { out = append(out, string(b)) })
	}
	return out
}

func TestLineSplitterHoldsPartialLines(t *testing.T) {
	var s LineSplitter
	got := split(&s, "ab", "c\nde", "f\r\n", "\n", "gh")
	want := []string{"abc", "def", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q want %q", got, want)
	}
	if s.Pending() != 2 {
		t.Fatalf("pending %d", s.Pending())
	}
	var last []string
	s.Flush(func(b []byte) { last = append(last, string(b)) })
	if len(last) != 1 || last[0] != "gh" {
		t.Fatalf("flush %q", last)
	}
}

func TestLineSplitterSkipsOversizedLines(t *testing.T) {
	s := LineSplitter{max: 10}
	got := split(&s, "short\n", strings.Repeat("x", 8), strings.Repeat("y", 8), "z\nnext\n", strings.Repeat("q", 30)+"\n")
	if len(got) != 4 || got[0] != "short" || got[2] != "next" {
		t.Fatalf("got %q", got)
	}
	for _, i := range []int{1, 3} {
		if !strings.HasPrefix(got[i], oversizePrefix) {
			t.Errorf("line %d: %q is not an oversize marker", i, got[i])
		}
	}
	if !strings.Contains(got[1], "17 bytes") || !strings.Contains(got[3], "30 bytes") {
		t.Errorf("sizes wrong: %q", got)
	}
}

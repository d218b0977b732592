package shell

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The two reference cases of the exec tools contract, verbatim.
func TestTruncateReference(t *testing.T) {
	var lines strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&lines, "%03d\n", i)
	}
	cases := []struct {
		text      string
		maxTokens int
		want      string
		tokens    int
	}{
		{lines.String(), 16, "001\n002\n003\n004\n…12 tokens truncated…\n017\n018\n019\n020\n", 20},
		{"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", 4, "…16 tokens truncated…", 16},
	}
	for _, c := range cases {
		got, tokens, truncated := Truncate(c.text, c.maxTokens)
		if got != c.want || tokens != c.tokens || !truncated {
			t.Errorf("Truncate(%q, %d) = %q, %d, %v; want %q, %d, true", c.text, c.maxTokens, got, tokens, truncated, c.want, c.tokens)
		}
	}
}

func TestTruncateFits(t *testing.T) {
	text := "héllo\nwörld\n" // 14 bytes: 4 tokens
	got, tokens, truncated := Truncate(text, 4)
	if got != text || tokens != 4 || truncated {
		t.Errorf("Truncate(%q, 4) = %q, %d, %v; want it unchanged, 4, false", text, got, tokens, truncated)
	}
}

func TestTruncateUTF8(t *testing.T) {
	// No newlines and only 4-byte characters: every cut must still fall
	// between characters.
	text := strings.Repeat("😀", 40)
	for maxTokens := 7; maxTokens < 40; maxTokens++ {
		out, _, truncated := Truncate(text, maxTokens)
		if !truncated || !utf8.ValidString(out) || len(out) > maxTokens*4 {
			t.Fatalf("Truncate(40 emoji, %d) = %q (%d bytes), truncated %v", maxTokens, out, len(out), truncated)
		}
		checkShape(t, text, out)
	}
}

func TestTruncateMidLineGetsOwnLine(t *testing.T) {
	// One line, no newline at all. The 80-byte budget holds the 25-byte
	// marker, the newlines on both sides of it and 53 bytes of text: 26
	// before and 27 after; 147 bytes are cut, 37 tokens.
	text := strings.Repeat("x", 200)
	out, tokens, _ := Truncate(text, 20)
	want := strings.Repeat("x", 26) + "\n…37 tokens truncated…\n" + strings.Repeat("x", 27)
	if out != want || tokens != 50 {
		t.Errorf("got %q (%d tokens), want %q (50)", out, tokens, want)
	}
}

// A single huge first line must not be dropped whole because the only
// newline in the window is near its start: newlines are preferred, not
// obeyed at any cost.
func TestTruncatePrefersNewlinesWithinReason(t *testing.T) {
	text := "a\n" + strings.Repeat("b", 1000) + "\nend\n"
	out, _, _ := Truncate(text, 50)
	if !strings.HasPrefix(out, "a\nbbbb") || !strings.HasSuffix(out, "bbbb\nend\n") {
		t.Errorf("Truncate kept too little: %q", out)
	}
}

func TestTruncateGap(t *testing.T) {
	head, tail := "first\nlines\n", "last\nlines\n"
	// Room for everything but the gap: the marker marks the gap alone.
	out, tokens, truncated := truncateGap(head, tail, 1000, 1<<20)
	want := head + "…250 tokens truncated…\n" + tail
	if out != want || tokens != approxTokens(len(head)+len(tail)+1000) || !truncated {
		t.Errorf("got %q, %d, %v; want %q, %d, true", out, tokens, truncated, want, approxTokens(1023))
	}
	// Tight room: still one marker, counting the gap and the cut around it.
	out, _, _ = truncateGap(head, tail, 1000, 40)
	if strings.Count(out, "tokens truncated") != 1 || len(out) > 40 {
		t.Errorf("tight gap truncation = %q", out)
	}
	m := markerRE.FindStringSubmatch(out)
	n, _ := strconv.Atoi(m[1])
	if want := approxTokens(len(head) + len(tail) + 1000 - (len(out) - len(m[0]))); n != want {
		t.Errorf("marker counts %d tokens, want %d", n, want)
	}
}

var markerRE = regexp.MustCompile(`\n?…(\d+) tokens truncated…\n`)

// checkShape verifies that out is text with its middle replaced by one
// marker line whose count matches what was removed.
func checkShape(t *testing.T, text, out string) {
	t.Helper()
	if out == marker(approxTokens(len(text))) {
		return
	}
	// The text may itself contain marker-like lines: try every split.
	for _, loc := range markerRE.FindAllStringSubmatchIndex(out, -1) {
		n, _ := strconv.Atoi(out[loc[2]:loc[3]])
		suffix := out[loc[1]:]
		// A newline before the marker is either the prefix's own or the
		// one that puts the marker on its own line after a mid-line cut.
		for _, end := range []int{loc[0], loc[0] + 1} {
			prefix := out[:end]
			if end > loc[0] && out[loc[0]] != '\n' {
				continue
			}
			if end == loc[0] && out[loc[0]] == '\n' && (prefix == "" || strings.HasSuffix(prefix, "\n")) {
				continue // an added newline only follows a mid-line cut
			}
			if strings.HasPrefix(text, prefix) && strings.HasSuffix(text, suffix) && len(prefix)+len(suffix) < len(text) &&
				n == approxTokens(len(text)-len(prefix)-len(suffix)) {
				return
			}
		}
	}
	t.Errorf("Truncate output %q is not a prefix, a marker line and a suffix of %q", out, text)
}

func FuzzTruncate(f *testing.F) {
	f.Add("001\n002\n003\n004\n005\n006\n007\n008\n009\n010\n", 5)
	f.Add("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", 4)
	f.Add("héllo wörld ñ 日本語テキスト 😀😀\nline\n", 8)
	f.Add("\xff\xfe\x80\x80\x80\x80abc\n", 2)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, text string, maxTokens int) {
		maxTokens %= 1000
		out, tokens, truncated := Truncate(text, maxTokens)
		budget := budgetBytes(maxTokens)
		if tokens != approxTokens(len(text)) {
			t.Fatalf("original tokens %d, want %d", tokens, approxTokens(len(text)))
		}
		if len(text) <= budget {
			if out != text || truncated {
				t.Fatalf("text that fits was changed: %q -> %q", text, out)
			}
			return
		}
		if !truncated {
			t.Fatalf("text over budget reported untruncated")
		}
		if alone := marker(tokens); len(out) > max(budget, len(alone)) {
			t.Fatalf("output %d bytes exceeds budget %d: %q", len(out), budget, out)
		}
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatalf("valid UTF-8 in, invalid out: %q", out)
		}
		checkShape(t, text, out)
	})
}

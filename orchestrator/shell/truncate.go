package shell

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

const bytesPerToken = 4

// approxTokens is the contract's token estimate for n bytes: ceil(n/4).
func approxTokens(n int) int { return (n + bytesPerToken - 1) / bytesPerToken }

// marker is the line that stands for n removed tokens.
func marker(n int) string { return "…" + strconv.Itoa(n) + " tokens truncated…" }

// budgetBytes is the byte budget of maxTokens tokens, saturating instead of
// overflowing for absurd requests.
func budgetBytes(maxTokens int) int {
	if maxTokens <= 0 {
		return 0
	}
	if maxTokens > math.MaxInt/bytesPerToken {
		return math.MaxInt
	}
	return maxTokens * bytesPerToken
}

// Truncate bounds text to maxTokens tokens (maxTokens*4 bytes, marker
// included). Text that fits is returned unchanged. Otherwise the beginning
// and end are kept and the middle is replaced by the line
// "…N tokens truncated…", N being the removed bytes / 4 rounded up. Cuts
// prefer newline boundaries and never split a UTF-8 character. When the
// budget cannot hold the marker and some text, the result is the marker
// alone, counting the whole text; it is then the one result longer than the
// budget. originalTokens is the token estimate of the whole text.
func Truncate(text string, maxTokens int) (out string, originalTokens int, truncated bool) {
	return truncateGap(text, "", 0, budgetBytes(maxTokens))
}

// truncateGap is Truncate for the text head+tail from which omitted bytes
// were already dropped between head and tail (by the output buffer). The cut
// then always covers that gap, so a single marker accounts for everything
// missing, and the token counts include the omitted bytes.
func truncateGap(head, tail string, omitted, budget int) (string, int, bool) {
	s := head + tail
	tokens := approxTokens(len(s) + omitted)
	if omitted == 0 && len(s) <= budget {
		return s, tokens, false
	}
	gap := -1
	if omitted > 0 {
		gap = len(head)
	}
	// The marker counts at most every token, so reserving its longest form
	// and the newline ending its line keeps the result within budget. When
	// the prefix ends mid-line the marker needs a newline before it too;
	// one byte less of content then makes room (so at most two rounds).
	reserve := len(marker(tokens)) + 1
	for keep := budget - reserve; keep > 0; keep-- {
		a, b := cutPoints(s, gap, keep)
		if a == 0 && b == len(s) {
			break // nothing of the text fits beside the marker
		}
		out := assemble(s, a, b, omitted)
		if len(out) <= budget {
			return out, tokens, true
		}
	}
	return marker(tokens), tokens, true
}

// cutPoints chooses the kept prefix s[:a] and suffix s[b:], keep bytes in
// all, split evenly. With a gap (gap >= 0) the cut must contain it, and
// budget one side cannot use goes to the other.
func cutPoints(s string, gap, keep int) (a, b int) {
	left := keep / 2
	right := keep - left
	if gap < 0 {
		return prefixEnd(s, left), suffixStart(s, len(s)-right)
	}
	if left > gap {
		right += left - gap
		left = gap
	}
	if right > len(s)-gap {
		left += right - (len(s) - gap)
		right = len(s) - gap
	}
	left = min(left, gap)
	a, b = gap, gap
	if left < gap {
		a = prefixEnd(s, left)
	}
	if right < len(s)-gap {
		b = suffixStart(s, len(s)-right)
	}
	return a, b
}

// prefixEnd is where a prefix of at most limit bytes ends: just after the
// last newline, unless that would give up more than half the room, else on
// the last character boundary.
func prefixEnd(s string, limit int) int {
	if i := strings.LastIndexByte(s[:limit], '\n'); i >= 0 && 2*(i+1) >= limit {
		return i + 1
	}
	return floorBoundary(s, limit)
}

// suffixStart is where a suffix starting at or after start begins: at the
// start of a line, unless that would give up more than half the room, else
// on the first character boundary.
func suffixStart(s string, start int) int {
	if start <= 0 || s[start-1] == '\n' {
		return max(start, 0)
	}
	room := len(s) - start
	if i := strings.IndexByte(s[start:], '\n'); i >= 0 {
		if b := start + i + 1; 2*(len(s)-b) >= room {
			return b
		}
	}
	return ceilBoundary(s, start)
}

// isContinuation reports whether c continues a multi-byte UTF-8 sequence.
func isContinuation(c byte) bool { return c&0xC0 == 0x80 }

// floorBoundary moves i back to the start of the character it falls in.
// Runs of stray continuation bytes (invalid UTF-8) are cut anywhere after
// utf8.UTFMax-1 steps: there is no character to keep whole.
func floorBoundary(s string, i int) int {
	for n := 0; n < utf8.UTFMax-1 && i > 0 && i < len(s) && isContinuation(s[i]); n++ {
		i--
	}
	return i
}

// ceilBoundary moves i forward to the start of the next character.
func ceilBoundary(s string, i int) int {
	for n := 0; n < utf8.UTFMax-1 && i < len(s) && isContinuation(s[i]); n++ {
		i++
	}
	return i
}

// assemble joins s[:a], the marker on its own line and s[b:].
func assemble(s string, a, b, omitted int) string {
	m := marker(approxTokens(b - a + omitted))
	var sb strings.Builder
	sb.Grow(a + 1 + len(m) + 1 + len(s) - b)
	sb.WriteString(s[:a])
	if a > 0 && s[a-1] != '\n' {
		sb.WriteByte('\n')
	}
	sb.WriteString(m)
	sb.WriteByte('\n')
	sb.WriteString(s[b:])
	return sb.String()
}

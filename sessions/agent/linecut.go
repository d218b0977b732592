package agent

import (
	"bytes"
	"slices"
	"strconv"
)

// TruncatedType is the type of the line that stands in a turn file for a
// line of the agent's output longer than MaxLineBytes:
//
//	{"type":"zwarm.truncated","bytes":N}
//
// N is how many bytes of the line were cut (all of it but its newline,
// which ends the marker). Readers parse it as the placeholder of an
// oversized line: a raw event saying how long the line was.
const TruncatedType = "zwarm.truncated"

var truncatedPrefix = []byte(`{"type":"` + TruncatedType + `","bytes":`)

// TruncatedLine is the marker of a cut line of n bytes, with its newline.
func TruncatedLine(n int64) []byte {
	b := append([]byte(nil), truncatedPrefix...)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '}', '\n')
}

// truncatedBytes reads a marker line (without its newline): the bytes cut,
// and whether line is one.
func truncatedBytes(line []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(line, truncatedPrefix)
	if !ok || len(rest) < 2 || len(rest) > 21 || rest[len(rest)-1] != '}' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(rest[:len(rest)-1]), 10, 64)
	return n, err == nil && n >= 0
}

// ParseableLine is what a parser is given for a line recorded in a turn
// file (with or without its newline): the line without its line ending, or
// for the marker of a cut line its placeholder.
func ParseableLine(rec []byte) []byte {
	if n := len(rec); n > 0 && rec[n-1] == '\n' {
		rec = rec[:n-1]
	}
	if n, ok := truncatedBytes(rec); ok {
		return oversize(n)
	}
	return trimCR(rec)
}

// LineCutter decides what a turn file records of an agent's output: every
// line as it came, but a line longer than MaxLineBytes, which is replaced
// by a TruncatedType marker. It holds at most MaxLineBytes of an
// unfinished line, however long the line grows.
type LineCutter struct {
	buf     []byte // the unfinished line, held back until its newline
	cutting bool   // the unfinished line is over the limit: counted, not held
	cut     int64  // its bytes so far
}

// Add takes the next piece of output, which must end at a newline or hold
// none (the start or middle of a line). When the piece completes a line it
// returns what the turn file records for it, its newline included; nil
// otherwise. The slice is valid until the next call.
func (c *LineCutter) Add(piece []byte) []byte {
	if len(c.buf) == 0 && cap(c.buf) > 1<<20 {
		c.buf = nil // a long line's buffer is let go once it is recorded
	}
	n := len(piece)
	if n == 0 || piece[n-1] != '\n' {
		c.hold(piece)
		return nil
	}
	body := int64(n - 1)
	switch {
	case c.cutting:
		cut := c.cut + body
		c.reset()
		return TruncatedLine(cut)
	case len(c.buf) == 0 && body <= MaxLineBytes:
		return piece
	case int64(len(c.buf))+body > MaxLineBytes:
		cut := int64(len(c.buf)) + body
		c.reset()
		return TruncatedLine(cut)
	}
	c.buf = append(c.buf, piece...)
	line := c.buf
	c.buf = c.buf[:0]
	return line
}

// hold keeps a piece of an unfinished line, or counts it once the line is
// over the limit.
func (c *LineCutter) hold(p []byte) {
	switch {
	case c.cutting:
		c.cut += int64(len(p))
	case len(c.buf)+len(p) > MaxLineBytes:
		c.cutting, c.cut = true, int64(len(c.buf)+len(p))
		c.buf = nil
	default:
		if n := len(c.buf) + len(p); n > cap(c.buf) {
			// Doubling, not append's quarter steps past a few hundred
			// bytes: a line of megabytes is copied a few times, not
			// dozens, and leaves a few megabytes of garbage, not tens.
			c.buf = slices.Grow(c.buf, min(max(n, 2*cap(c.buf)), MaxLineBytes+1)-len(c.buf))
		}
		c.buf = append(c.buf, p...)
	}
}

// reset forgets the line just ended.
func (c *LineCutter) reset() {
	c.cutting, c.cut = false, 0
	c.buf = c.buf[:0]
}

// Flush ends the output: what the turn file records of an unterminated
// last line (as it came, without a newline; a marker with its newline if
// it was too long), nil if there is none.
func (c *LineCutter) Flush() []byte {
	defer c.reset()
	switch {
	case c.cutting:
		return TruncatedLine(c.cut)
	case len(c.buf) > 0:
		return c.buf
	}
	return nil
}

// Pending is how many bytes of an unfinished line have been taken and are
// not yet recorded.
func (c *LineCutter) Pending() int64 {
	if c.cutting {
		return c.cut
	}
	return int64(len(c.buf))
}

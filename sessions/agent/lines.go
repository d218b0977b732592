package agent

import (
	"bytes"
	"fmt"
)

// MaxLineBytes is the longest line kept whole. Agents print single events of
// several megabytes (a command's whole output); a longer line is cut from
// the turn file (a TruncatedType marker stands in its place), skipped by
// readers of older files, and reported as a raw event instead of
// exhausting memory: no process of zwarm holds more of a line than this.
const MaxLineBytes = 8 << 20

// LineSplitter cuts a byte stream into lines. A line is only complete once
// its newline arrives: a writer may still be in the middle of it.
type LineSplitter struct {
	buf      []byte
	max      int
	skipping bool  // inside a line longer than max
	skipped  int64 // bytes of that line so far
}

// Write feeds p and calls emit for every complete line, without its newline
// (a trailing \r is dropped too). The slice passed to emit is only valid
// during the call.
func (s *LineSplitter) Write(p []byte, emit func([]byte)) {
	limit := s.max
	if limit <= 0 {
		limit = MaxLineBytes
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if s.skipping {
				s.skipped += int64(len(p))
			} else if len(s.buf)+len(p) > limit {
				s.skipping, s.skipped = true, int64(len(s.buf)+len(p))
				s.buf = s.buf[:0]
			} else {
				s.buf = append(s.buf, p...)
			}
			return
		}
		chunk := p[:i]
		p = p[i+1:]
		switch {
		case s.skipping:
			emit(oversize(s.skipped + int64(len(chunk))))
			s.skipping, s.skipped = false, 0
		case len(s.buf) == 0:
			if len(chunk) > limit {
				emit(oversize(int64(len(chunk))))
			} else {
				emit(ParseableLine(chunk))
			}
		default:
			if len(s.buf)+len(chunk) > limit {
				emit(oversize(int64(len(s.buf) + len(chunk))))
			} else {
				s.buf = append(s.buf, chunk...)
				emit(ParseableLine(s.buf))
			}
			s.buf = s.buf[:0]
		}
	}
}

// Pending is how many bytes of an incomplete line are held back.
func (s *LineSplitter) Pending() int64 {
	if s.skipping {
		return s.skipped
	}
	return int64(len(s.buf))
}

// Flush emits the incomplete last line: use it only once the writer is done.
func (s *LineSplitter) Flush(emit func([]byte)) {
	if s.skipping {
		emit(oversize(s.skipped))
	} else if len(s.buf) > 0 {
		emit(ParseableLine(s.buf))
	}
	s.buf, s.skipping, s.skipped = s.buf[:0], false, 0
}

// oversizePrefix starts the placeholder for a skipped line. It is not JSON,
// so parsers turn it into an EventRaw that says what happened.
const oversizePrefix = "zwarm: skipped a line of "

func oversize(n int64) []byte {
	return []byte(fmt.Sprintf("%s%d bytes (over the %d MiB limit)", oversizePrefix, n, MaxLineBytes>>20))
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

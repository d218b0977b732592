package shell

import "unicode/utf8"

// bufferLimit bounds the output kept per process between two calls.
const bufferLimit = 1 << 20

// headTail holds the output a process wrote since it was last read, at most
// 2*half bytes: the first half bytes and the last half, counting the bytes
// dropped between them. The tail is a ring, so writing costs the same however
// much was written before.
type headTail struct {
	half    int
	head    []byte
	ring    []byte // allocated once the head is full
	start   int    // first tail byte in ring
	n       int    // tail bytes in ring
	omitted int
}

func newHeadTail(limit int) headTail { return headTail{half: limit / 2} }

func (h *headTail) write(p []byte) {
	if room := h.half - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return
	}
	if h.ring == nil {
		h.ring = make([]byte, h.half)
	}
	if len(p) >= h.half {
		h.omitted += h.n + len(p) - h.half
		copy(h.ring, p[len(p)-h.half:])
		h.start, h.n = 0, h.half
		return
	}
	if over := h.n + len(p) - h.half; over > 0 {
		h.start = (h.start + over) % h.half
		h.n -= over
		h.omitted += over
	}
	// The free space starts at end and may wrap; it holds all of p.
	end := (h.start + h.n) % h.half
	k := copy(h.ring[end:], p)
	copy(h.ring, p[k:])
	h.n += len(p)
}

// len is the number of bytes held.
func (h *headTail) len() int { return len(h.head) + h.n }

// take empties the buffer, returning its head and tail and how many bytes
// fell between them. Where bytes were dropped, partial characters on either
// side of the gap are dropped too. With hold, an incomplete UTF-8 character
// at the very end stays in the buffer for the next call, which will have
// the rest of it.
func (h *headTail) take(hold bool) (head, tail string, omitted int) {
	head = string(h.head)
	if h.n > 0 {
		b := make([]byte, 0, h.n)
		if h.start+h.n <= h.half {
			b = append(b, h.ring[h.start:h.start+h.n]...)
		} else {
			b = append(b, h.ring[h.start:]...)
			b = append(b, h.ring[:h.start+h.n-h.half]...)
		}
		tail = string(b)
	}
	omitted = h.omitted
	h.head, h.start, h.n, h.omitted = h.head[:0], 0, 0, 0

	if omitted > 0 {
		k := incompleteSuffix(head)
		head = head[:len(head)-k]
		j := 0
		for j < len(tail) && j < utf8.UTFMax-1 && isContinuation(tail[j]) {
			j++
		}
		tail = tail[j:]
		omitted += k + j
	}
	if hold {
		if tail != "" {
			k := incompleteSuffix(tail)
			h.write([]byte(tail[len(tail)-k:]))
			tail = tail[:len(tail)-k]
		} else {
			k := incompleteSuffix(head)
			h.write([]byte(head[len(head)-k:]))
			head = head[:len(head)-k]
		}
	}
	return head, tail, omitted
}

// incompleteSuffix is the length of the unfinished UTF-8 sequence s ends
// with, if any: a lead byte followed by fewer continuation bytes than it
// announces.
func incompleteSuffix(s string) int {
	for i := len(s) - 1; i >= 0 && i >= len(s)-(utf8.UTFMax-1); i-- {
		if isContinuation(s[i]) {
			continue
		}
		if !utf8.FullRuneInString(s[i:]) {
			return len(s) - i
		}
		return 0
	}
	return 0
}

// crlf turns the terminal's CRLF line endings back into LF across reads: a
// CR that ends one read is held until the next read shows what follows it.
type crlf struct{ cr bool }

func (c *crlf) apply(dst, p []byte) []byte {
	for _, b := range p {
		if c.cr {
			c.cr = false
			if b != '\n' {
				dst = append(dst, '\r')
			}
		}
		if b == '\r' {
			c.cr = true
			continue
		}
		dst = append(dst, b)
	}
	return dst
}

// flush returns a CR still held at the end of the output.
func (c *crlf) flush(dst []byte) []byte {
	if c.cr {
		c.cr = false
		dst = append(dst, '\r')
	}
	return dst
}

package shell

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// Writing several times the limit in odd-sized chunks keeps exactly the first
// and last halves and counts the rest.
func TestHeadTailBound(t *testing.T) {
	const limit = 64 << 10
	var all bytes.Buffer
	h := newHeadTail(limit)
	rng := rand.New(rand.NewPCG(1, 2))
	for all.Len() < 5*limit {
		chunk := make([]byte, 1+rng.IntN(3*limit/4))
		for i := range chunk {
			chunk[i] = 'a' + byte((all.Len()+i)%26)
		}
		all.Write(chunk)
		h.write(chunk)
		if h.len() > limit {
			t.Fatalf("buffer holds %d bytes, limit %d", h.len(), limit)
		}
	}
	head, tail, omitted := h.take(false)
	want := all.Bytes()
	if head != string(want[:limit/2]) || tail != string(want[len(want)-limit/2:]) || omitted != len(want)-limit {
		t.Fatalf("head/tail/omitted = %d/%d/%d bytes, want the first and last %d of %d", len(head), len(tail), omitted, limit/2, len(want))
	}
	if h.len() != 0 {
		t.Fatalf("take left %d bytes", h.len())
	}
	// The buffer is reusable after take.
	h.write([]byte("again"))
	if head, tail, omitted := h.take(false); head+tail != "again" || omitted != 0 {
		t.Fatalf("after take: %q %q %d", head, tail, omitted)
	}
}

func TestHeadTailSplitsNoCharacterAtTheGap(t *testing.T) {
	h := newHeadTail(16)
	h.write([]byte(strings.Repeat("é", 20))) // 40 bytes of 2-byte characters
	h.write([]byte("x"))                     // shift the tail by one byte
	head, tail, omitted := h.take(false)
	if !utf8.ValidString(head) || !utf8.ValidString(tail) || len(head)+len(tail)+omitted != 41 {
		t.Fatalf("head %q tail %q omitted %d", head, tail, omitted)
	}
}

func TestHeadTailHoldsIncompleteCharacter(t *testing.T) {
	h := newHeadTail(bufferLimit)
	emoji := []byte("😀")
	h.write(append([]byte("ok "), emoji[:2]...))
	head, tail, _ := h.take(true)
	if head+tail != "ok " {
		t.Fatalf("first take = %q, want %q", head+tail, "ok ")
	}
	h.write(emoji[2:])
	if head, tail, _ := h.take(true); head+tail != "😀" {
		t.Fatalf("second take = %q, want the whole emoji", head+tail)
	}
}

func TestCRLF(t *testing.T) {
	in := "a\r\nb\r\r\nc\rd\r"
	for size := 1; size <= len(in); size++ {
		var c crlf
		var out []byte
		for i := 0; i < len(in); i += size {
			out = c.apply(out, []byte(in[i:min(i+size, len(in))]))
		}
		out = c.flush(out)
		if want := "a\nb\r\nc\rd\r"; string(out) != want {
			t.Errorf("chunks of %d: %q, want %q", size, out, want)
		}
	}
}

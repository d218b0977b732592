package supervisor

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
)

// readAll runs a chunkReader on what write writes to a pipe, and returns
// a copy of every chunk. Each chunk is overwritten before it is given
// back, as a recycled buffer would be, so a reader that passed on a
// buffer it still filled, or reused one the driver still held, is caught.
func readAll(t *testing.T, write func(w io.Writer)) [][]byte {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		write(w)
		w.Close()
	}()
	c := newChunkReader(r)
	go c.run()
	var chunks [][]byte
	for chunk := range c.Chunks() {
		chunks = append(chunks, bytes.Clone(chunk))
		for i := range chunk {
			chunk[i] = 'Z'
		}
		c.Done(chunk)
	}
	return chunks
}

// The reader passes stdout on in pieces that end at a line boundary, but
// for the output's unfinished end and for a line so long that it holds
// maxChunk of it.
func TestChunkReaderCutsBetweenLines(t *testing.T) {
	long := strings.Repeat("x", 3*maxChunk+17)
	want := "one\ntwo\n" + long + "\n" + strings.Repeat("line\n", 100_000) + "last"
	chunks := readAll(t, func(w io.Writer) {
		io.WriteString(w, "one\ntw")
		for s := want[len("one\ntw"):]; len(s) > 0; {
			n := min(len(s), 100_003) // writes that end inside lines
			io.WriteString(w, s[:n])
			s = s[n:]
		}
	})
	var all []byte
	for i, c := range chunks {
		if i < len(chunks)-1 && !bytes.HasSuffix(c, []byte("\n")) && len(c) < maxChunk {
			t.Fatalf("chunk %d ends inside a line: ...%q", i, c[max(0, len(c)-20):])
		}
		if len(c) > 2*maxChunk {
			t.Fatalf("chunk %d holds %d bytes, over twice maxChunk", i, len(c))
		}
		all = append(all, c...)
	}
	if string(all) != want {
		t.Fatalf("read %d bytes, want %d; they differ from byte %d", len(all), len(want), firstDiff(all, []byte(want)))
	}
	if last := chunks[len(chunks)-1]; string(last) != "last" {
		t.Fatalf("the unfinished end came as ...%q", last[max(0, len(last)-20):])
	}
}

// Whatever the agent prints, the reader allocates only its few buffers
// (each grown to maxChunk at most: a few MiB in all), so its memory does
// not wait on the garbage collector's pace.
func TestChunkReaderRecyclesItsBuffers(t *testing.T) {
	const total = 128 << 20
	line := append(bytes.Repeat([]byte("y"), 3*maxChunk), '\n')
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n := 0
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for written := 0; written < total; written += len(line) {
			w.Write(line)
		}
		w.Close()
	}()
	c := newChunkReader(r)
	go c.run()
	for chunk := range c.Chunks() {
		n += len(chunk)
		c.Done(chunk)
	}
	runtime.ReadMemStats(&after)
	if n < total {
		t.Fatalf("read %d bytes, want %d", n, total)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("reading %d MiB allocated %d MiB: chunks are not recycled", total>>20, alloc>>20)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

package supervisor

import (
	"bytes"
	"os"
	"slices"
)

// maxChunk bounds how much of an unfinished line the stdout reader holds
// before passing it on, so a huge line never sits in memory whole here.
const maxChunk = 1 << 20

// firstChunk is a chunk buffer's size until a line longer than it comes.
const firstChunk = 64 << 10

// chunkBuffers is how many buffers a reader cycles through: one it fills,
// one the driver records, one spare, so that reading goes on while a
// chunk is recorded.
const chunkBuffers = 3

// chunkReader drains an agent's stdout and passes it on in chunks that end
// at a line boundary whenever possible, so the driver can cut turn files
// exactly between lines. Its buffers are recycled: the driver hands each
// chunk back once it is recorded, so a supervisor's memory is the same
// whether its agent prints a kilobyte or gigabytes, and whatever the pace
// of the garbage collector (a fresh copy of each chunk made 500 MiB of
// garbage of a 500 MB line).
type chunkReader struct {
	r     *os.File
	out   chan []byte // chunks, in order; closed at EOF
	spent chan []byte // chunks recorded, their buffers free again
	made  int
}

func newChunkReader(r *os.File) *chunkReader {
	return &chunkReader{r: r, out: make(chan []byte), spent: make(chan []byte, chunkBuffers)}
}

// Chunks is the channel to receive from. A chunk is the reader's until
// given back with Done; its bytes must not be kept past that.
func (c *chunkReader) Chunks() <-chan []byte { return c.out }

// Done gives a chunk back. It never blocks: the channel holds every
// buffer there is.
func (c *chunkReader) Done(chunk []byte) { c.spent <- chunk[:0] }

// run reads until EOF, then closes the chunks channel and the pipe.
func (c *chunkReader) run() {
	defer close(c.out)
	defer c.r.Close()
	buf := c.buffer()
	for {
		if len(buf) >= maxChunk {
			// An unfinished line fills the chunk: passed on as it is.
			next := c.buffer()
			c.out <- buf
			buf = next
			continue
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(cap(buf), maxChunk-len(buf)))
		}
		read := len(buf)
		n, err := c.r.Read(buf[read:cap(buf)])
		buf = buf[:read+n]
		// Only the bytes just read can hold a newline: what was carried
		// over is the start of a line.
		if i := bytes.LastIndexByte(buf[read:], '\n'); i >= 0 {
			cut := read + i + 1
			next := append(c.buffer(), buf[cut:]...)
			c.out <- buf[:cut]
			buf = next
		}
		if err != nil {
			if len(buf) > 0 {
				c.out <- buf
			}
			return
		}
	}
}

// buffer is an empty buffer to fill: a spent one, a new one while fewer
// than chunkBuffers exist, else the next the driver gives back.
func (c *chunkReader) buffer() []byte {
	select {
	case b := <-c.spent:
		return b
	default:
	}
	if c.made < chunkBuffers {
		c.made++
		return make([]byte, 0, firstChunk)
	}
	return <-c.spent
}

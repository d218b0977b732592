package watch

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"syscall"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/record"
)

const readChunk = 256 << 10

// chunks are the read buffers of TurnReaders, shared: a reader of a turn
// that has not grown allocates nothing, and many readers hold none between
// reads.
var chunks = sync.Pool{New: func() any { b := make([]byte, readChunk); return &b }}

// TurnReader parses a turn file incrementally: each Read parses only the
// bytes written since the previous one. A running agent may be in the middle
// of a line; that line is held back until its newline arrives.
type TurnReader struct {
	path   string
	parser agent.Parser
	pos    int64 // next byte to read from the file
	split  agent.LineSplitter
	f      *os.File
}

// NewTurnReader starts reading path at offset, which must be a line
// boundary (a Turn.Offset or 0).
func NewTurnReader(path string, p agent.Parser, offset int64) *TurnReader {
	return &TurnReader{path: path, parser: p, pos: offset}
}

// Offset is how many bytes are fully parsed: where a later reader resumes.
func (r *TurnReader) Offset() int64 { return r.pos - r.split.Pending() }

// Read parses what was appended since the last call and passes the events
// to fn. With final set the file is complete, and an unterminated last line
// is parsed too. A missing file is not an error: the agent has not written
// yet.
func (r *TurnReader) Read(final bool, fn func(record.Event)) error {
	_, err := r.ReadSome(final, 0, fn)
	return err
}

// ReadSome is Read of at most limit bytes (0: no limit); more reports that
// the file held more than that, for another call to read on. A final
// read's unterminated last line is parsed once the file is read to its
// end.
func (r *TurnReader) ReadSome(final bool, limit int64, fn func(record.Event)) (more bool, err error) {
	if r.f == nil {
		f, err := os.Open(r.path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read turn: %w", err)
		}
		r.f = f
	}
	fi, err := r.f.Stat()
	if err != nil {
		return false, fmt.Errorf("read turn %s: %w", r.path, err)
	}
	if fi.Size() <= r.pos && r.reopened(fi) {
		return r.ReadSome(final, limit, fn)
	}
	if fi.Size() <= r.pos {
		if final {
			r.split.Flush(r.emit(fn))
		}
		return false, nil
	}
	// A running turn is read up to the size just seen, not to an end that
	// moves: a reader slower than an agent printing gigabytes would
	// otherwise never return, holding every event parsed meanwhile.
	end := fi.Size()
	if limit > 0 && end-r.pos > limit {
		end, final, more = r.pos+limit, false, true
	} else if final {
		end = -1 // the file is complete: whatever it has
	}
	span := fi.Size() - r.pos
	if end >= 0 {
		span = end - r.pos
	}
	if span >= pipelineMin && runtime.GOMAXPROCS(0) > 1 {
		return more, r.readPipelined(final, end, fn)
	}
	return more, r.readRest(final, end, r.emit(fn))
}

// readRest reads the file from r.pos to end (its end if end < 0) and passes
// every complete line to emit; with final set the unterminated last one
// too.
func (r *TurnReader) readRest(final bool, end int64, emit func([]byte)) error {
	bp := chunks.Get().(*[]byte)
	defer chunks.Put(bp)
	buf := *bp
	for end < 0 || r.pos < end {
		if end >= 0 && end-r.pos < int64(len(buf)) {
			buf = buf[:end-r.pos]
		}
		n, err := r.f.ReadAt(buf, r.pos)
		if n > 0 {
			r.pos += int64(n)
			r.split.Write(buf[:n], emit)
		}
		if err == io.EOF || n == 0 {
			break
		}
		if err != nil {
			return fmt.Errorf("read turn %s: %w", r.path, err)
		}
	}
	if final {
		r.split.Flush(emit)
	}
	return nil
}

func (r *TurnReader) emit(fn func(record.Event)) func([]byte) {
	return func(line []byte) {
		for _, ev := range r.parser.ParseLine(line) {
			fn(ev)
		}
	}
}

// Close releases the file.
func (r *TurnReader) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// ReadTurnFile parses a whole turn file.
func ReadTurnFile(path string, p agent.Parser, fn func(record.Event)) error {
	r := NewTurnReader(path, p, 0)
	defer r.Close()
	return r.Read(true, fn)
}

// reopened moves on to a new file at the reader's path once the one it
// read to its end was removed: the supervisor records the rest of a turn
// whose file was removed in a new one (a line cut short at the switch is
// dropped; the new file starts with that line whole).
func (r *TurnReader) reopened(fi os.FileInfo) bool {
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Nlink != 0 {
		return false
	}
	f, err := os.Open(r.path)
	if err != nil {
		return false
	}
	if nfi, err := f.Stat(); err != nil || os.SameFile(fi, nfi) {
		f.Close()
		return false
	}
	r.f.Close()
	r.f, r.pos, r.split = f, 0, agent.LineSplitter{}
	return true
}

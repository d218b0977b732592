package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// tail reads a run's events.jsonl as it grows: each read returns the whole
// lines appended since the last one. A torn last line waits for its
// newline. The file is append-only; should it be replaced all the same
// (it shrank, it is another file, or it was gone for a while), it is read
// again from its start, and the read says so (reset).
type tail struct {
	path    string
	window  int64 // at first, read at most this much of the end; 0: all
	off     int64
	started bool
	file    fs.FileInfo // the file read so far
	gone    bool        // it was not there at a read since
}

type tailRead struct {
	events  []Event
	skipped int64 // bytes left unread at the start (the window)
	reset   bool  // the file was replaced: events start over
}

// maxRead bounds one read, so a huge backlog arrives in pieces.
const maxRead = 4 << 20

func (t *tail) read() (tailRead, error) {
	var r tailRead
	f, err := os.Open(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		t.gone = t.started
		return r, nil
	}
	if err != nil {
		return r, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return r, err
	}
	size := fi.Size()
	if t.started && (size < t.off || t.gone || !os.SameFile(t.file, fi)) {
		t.off, t.started, r.reset = 0, false, true
	}
	t.file, t.gone = fi, false
	if !t.started {
		t.started = true
		if t.window > 0 && size > t.window {
			start, err := lineAfter(f, size-t.window)
			if err != nil {
				return r, err
			}
			t.off, r.skipped = start, start
		}
	}
	for t.off < size {
		n := min(size-t.off, maxRead)
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, t.off); err != nil && !errors.Is(err, io.EOF) {
			return r, fmt.Errorf("read %s: %w", t.path, err)
		}
		end := bytes.LastIndexByte(buf, '\n')
		if end < 0 {
			if n == maxRead {
				// One line longer than maxRead: not something the
				// orchestrator writes (results are bounded); skip it.
				t.off += n
				continue
			}
			break // a torn last line: wait for the rest
		}
		for _, line := range bytes.Split(buf[:end], []byte{'\n'}) {
			var ev Event
			if len(bytes.TrimSpace(line)) > 0 && json.Unmarshal(line, &ev) == nil {
				r.events = append(r.events, ev)
			}
		}
		t.off += int64(end) + 1
	}
	return r, nil
}

// lineAfter is the offset of the first line that starts at or after off.
func lineAfter(f *os.File, off int64) (int64, error) {
	if off <= 0 {
		return 0, nil
	}
	buf := make([]byte, 64<<10)
	for pos := off - 1; ; {
		n, err := f.ReadAt(buf, pos)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return pos + int64(n), nil
			}
			return 0, err
		}
		pos += int64(n)
	}
}

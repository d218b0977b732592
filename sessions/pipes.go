package sessions

import (
	"bytes"
	"io"
	"os"
	"sync"
)

// maxChunk bounds how much of an unfinished line the stdout reader holds
// before passing it on, so a huge line never sits in memory whole here.
const maxChunk = 1 << 20

// readChunks drains r (the agent's stdout) until EOF and sends what it
// reads in pieces that end at a line boundary whenever possible, so the
// owner can cut turn files exactly between lines. It closes out at EOF.
func readChunks(r io.Reader, out chan<- []byte) {
	defer close(out)
	buf := make([]byte, 0, 64<<10)
	tmp := make([]byte, 64<<10)
	for {
		n, err := r.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			out <- append([]byte(nil), buf[:i+1]...)
			buf = append(buf[:0], buf[i+1:]...)
		} else if len(buf) >= maxChunk {
			out <- append([]byte(nil), buf...)
			buf = buf[:0]
		}
		if err != nil {
			if len(buf) > 0 {
				out <- append([]byte(nil), buf...)
			}
			return
		}
	}
}

// switchWriter writes to whichever file is current: the agent's stderr goes
// to the stderr file of the turn it is serving.
type switchWriter struct {
	mu sync.Mutex
	f  *os.File
}

func (w *switchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return len(p), nil
	}
	return w.f.Write(p)
}

func (w *switchWriter) set(f *os.File) {
	w.mu.Lock()
	old := w.f
	w.f = f
	w.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// turnFiles opens turn n's stdout and stderr files for appending.
func (st *Store) turnFiles(id string, n int) (out, errf *os.File, err error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	out, err = os.OpenFile(st.TurnPath(id, n), flags, filePerm)
	if err != nil {
		return nil, nil, err
	}
	errf, err = os.OpenFile(st.StderrPath(id, n), flags, filePerm)
	if err != nil {
		out.Close()
		return nil, nil, err
	}
	return out, errf, nil
}

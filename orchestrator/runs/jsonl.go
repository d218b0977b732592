package runs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Journal is an append-only JSONL file. A line is whole only with its
// newline: a crash mid-write leaves a torn last line, which ReadLines
// ignores and OpenJournal cuts off before anything is appended after it.
type Journal struct {
	path string
	f    *os.File
}

// OpenJournal opens path for appending, creating it, and drops a torn last
// line left by a crash.
func OpenJournal(path string) (*Journal, error) {
	f, err := openRunFile(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	end, err := wholeLinesEnd(f)
	if err == nil {
		err = f.Truncate(end)
	}
	if err == nil {
		_, err = f.Seek(end, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &Journal{path: path, f: f}, nil
}

// wholeLinesEnd is the offset just after the last newline of f.
func wholeLinesEnd(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	buf := make([]byte, 64<<10)
	for off := size; off > 0; {
		n := int64(len(buf))
		if off < n {
			n = off
		}
		off -= n
		if _, err := f.ReadAt(buf[:n], off); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return off + int64(i) + 1, nil
		}
	}
	return 0, nil
}

// Append writes lines in one write; sync makes them durable.
func (j *Journal) Append(sync bool, lines ...[]byte) error {
	var buf bytes.Buffer
	for _, l := range lines {
		if bytes.IndexByte(l, '\n') >= 0 {
			var c bytes.Buffer
			if err := json.Compact(&c, l); err != nil {
				return fmt.Errorf("append to %s: a line that is not JSON: %w", filepath.Base(j.path), err)
			}
			l = c.Bytes()
		}
		buf.Write(l)
		buf.WriteByte('\n')
	}
	if _, err := j.f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("append to %s: %w", j.path, err)
	}
	if sync {
		return j.Sync()
	}
	return nil
}

// Sync makes what was appended durable.
func (j *Journal) Sync() error {
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", j.path, err)
	}
	return nil
}

// Close closes the file.
func (j *Journal) Close() error { return j.f.Close() }

// ReadLines returns the whole lines of a JSONL file (a torn last line is
// left out); a missing file has none.
func ReadLines(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]byte
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return out, nil // a line without its newline is torn
		}
		if err != nil {
			return out, fmt.Errorf("read %s: %w", path, err)
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			out = append(out, line)
		}
	}
}

// RewriteJournal replaces the journal's whole content with lines,
// atomically (a crash leaves the old or the new file), and goes on
// appending to the new file.
func RewriteJournal(j *Journal, lines []json.RawMessage) error {
	dir := filepath.Dir(j.path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(j.path)+".tmp*")
	if err != nil {
		return fmt.Errorf("rewrite %s: %w", j.path, err)
	}
	tmp := f.Name()
	w := bufio.NewWriterSize(f, 256<<10)
	for _, l := range lines {
		w.Write(l)
		w.WriteByte('\n')
	}
	err = w.Flush()
	if err == nil {
		err = f.Chmod(FilePerm)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, j.path)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("rewrite %s: %w", j.path, err)
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return err
	}
	j.f.Close()
	j.f = f
	return nil
}

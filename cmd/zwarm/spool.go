package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// spoolMem is how much a spool keeps in memory before it moves to a file.
const spoolMem = 4 << 20

// spool keeps what is written to it for later, in memory while it is small
// and in an unlinked temporary file beyond spoolMem: show --json prints
// the messages after the steps, and a turn of millions of lines has
// hundreds of thousands of them.
type spool struct {
	mem  bytes.Buffer
	file *os.File
	err  error
}

func (s *spool) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.file == nil && s.mem.Len()+len(p) > spoolMem {
		f, err := os.CreateTemp("", "zwarm-show-*")
		if err != nil {
			s.err = fmt.Errorf("spool the messages: %w", err)
			return 0, s.err
		}
		os.Remove(f.Name()) // nothing is left behind, however the process ends
		if _, err := f.Write(s.mem.Bytes()); err != nil {
			f.Close()
			s.err = fmt.Errorf("spool the messages: %w", err)
			return 0, s.err
		}
		s.file = f
		s.mem = bytes.Buffer{}
	}
	if s.file != nil {
		n, err := s.file.Write(p)
		if err != nil {
			s.err = fmt.Errorf("spool the messages: %w", err)
		}
		return n, s.err
	}
	return s.mem.Write(p)
}

// copyTo writes what was spooled to w and releases the spool.
func (s *spool) copyTo(w io.Writer) error {
	if s.err != nil {
		return s.err
	}
	if s.file == nil {
		_, err := w.Write(s.mem.Bytes())
		return err
	}
	defer s.file.Close()
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("spool the messages: %w", err)
	}
	_, err := io.Copy(w, s.file)
	return err
}

// close releases the spool, if copyTo did not.
func (s *spool) close() {
	if s.file != nil {
		s.file.Close()
	}
}

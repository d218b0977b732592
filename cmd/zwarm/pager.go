package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pager is the program a long output is read through on a terminal, as
// git pages its diffs: $ZWARM_PAGER, else $PAGER, else less (with -FRX:
// quit if it fits, keep colours, leave the screen as it was). "" or "cat"
// means none.
type pager struct {
	cmd *exec.Cmd
	in  io.WriteCloser
}

func startPager() (*pager, error) {
	spec, set := os.LookupEnv("ZWARM_PAGER")
	if !set {
		spec, set = os.LookupEnv("PAGER")
	}
	if !set {
		if _, err := exec.LookPath("less"); err != nil {
			return nil, nil
		}
		spec = "less"
	}
	if strings.TrimSpace(spec) == "" || strings.TrimSpace(spec) == "cat" {
		return nil, nil
	}
	cmd := exec.Command("/bin/sh", "-c", spec)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = os.Environ()
	if _, ok := os.LookupEnv("LESS"); !ok {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil // no pager to be had: print straight
	}
	return &pager{cmd: cmd, in: in}, nil
}

// Write ignores a pager that was quit early: the reader has seen enough.
func (p *pager) Write(b []byte) (int, error) {
	p.in.Write(b)
	return len(b), nil
}

// Close ends the input and waits for the reader to quit the pager.
func (p *pager) Close() error {
	p.in.Close()
	return p.cmd.Wait()
}

// termSafe passes text to a terminal with every control character
// escaped (\x1b as the four characters \x1b), so a file a worker wrote
// cannot move the cursor, clear the screen or retitle the terminal; with
// keepSGR, the colour sequences (ESC [ ... m) git adds are kept. Newlines
// and tabs pass.
type termSafe struct {
	w       io.Writer
	keepSGR bool
	pending []byte // an escape sequence or UTF-8 character cut by a write
	buf     bytes.Buffer
}

func newTermSafe(w io.Writer, keepSGR bool) *termSafe { return &termSafe{w: w, keepSGR: keepSGR} }

func (t *termSafe) Write(p []byte) (int, error) {
	n := len(p)
	data := append(t.pending, p...)
	t.pending = nil
	for len(data) > 0 {
		c := data[0]
		switch {
		case c == 0x1b && t.keepSGR:
			end := sgrEnd(data)
			if end < 0 { // incomplete: wait for the rest
				t.pending = append([]byte(nil), data...)
				data = nil
				continue
			}
			if end > 0 {
				t.buf.Write(data[:end])
				data = data[end:]
				continue
			}
			t.buf.WriteString(`\x1b`)
			data = data[1:]
		case c == '\n' || c == '\t':
			t.buf.WriteByte(c)
			data = data[1:]
		case c < 0x20 || c == 0x7f:
			t.buf.WriteString(`\x` + strconv.FormatUint(uint64(c)>>4, 16) + strconv.FormatUint(uint64(c)&15, 16))
			data = data[1:]
		case c < utf8.RuneSelf:
			t.buf.WriteByte(c)
			data = data[1:]
		default:
			if !utf8.FullRune(data) {
				t.pending = append([]byte(nil), data...)
				data = nil
				continue
			}
			r, size := utf8.DecodeRune(data)
			if r >= 0x80 && r < 0xa0 { // C1 controls
				t.buf.WriteString(`\u00` + strconv.FormatUint(uint64(r), 16))
			} else {
				t.buf.Write(data[:size])
			}
			data = data[size:]
		}
	}
	if t.buf.Len() >= 32<<10 {
		return n, t.Flush()
	}
	return n, nil
}

// Flush writes what is held.
func (t *termSafe) Flush() error {
	if len(t.pending) > 0 {
		t.buf.WriteString(strings.ReplaceAll(string(t.pending), "\x1b", `\x1b`))
		t.pending = nil
	}
	_, err := t.w.Write(t.buf.Bytes())
	t.buf.Reset()
	return err
}

// sgrEnd is the length of the SGR sequence data starts with (ESC [
// digits and semicolons m), 0 if it starts with something else, -1 if
// data ends before it could tell.
func sgrEnd(data []byte) int {
	if len(data) < 2 {
		return -1
	}
	if data[1] != '[' {
		return 0
	}
	for i := 2; i < len(data); i++ {
		switch c := data[i]; {
		case c == 'm':
			return i + 1
		case c >= '0' && c <= '9' || c == ';':
			if i > 32 {
				return 0
			}
		default:
			return 0
		}
	}
	return -1
}

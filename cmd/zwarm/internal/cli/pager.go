package cli

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/zwarm/zwarm/sessions/render"
)

// Pager is the program a long output is read through on a terminal, as
// git pages its diffs: $ZWARM_PAGER, else $PAGER, else less (with -FRX:
// quit if it fits, keep colours, leave the screen as it was). "" or "cat"
// means none.
type Pager struct {
	cmd *exec.Cmd
	in  io.WriteCloser
}

func StartPager() (*Pager, error) {
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
	return &Pager{cmd: cmd, in: in}, nil
}

// Write ignores a pager that was quit early: the reader has seen enough.
func (p *Pager) Write(b []byte) (int, error) {
	p.in.Write(b)
	return len(b), nil
}

// Close ends the input and waits for the reader to quit the pager.
func (p *Pager) Close() error {
	p.in.Close()
	return p.cmd.Wait()
}

// TermSafe passes git's diff output to a terminal a line at a time, made
// safe: every control character is escaped (render.Safe), so a file a
// worker wrote cannot move the cursor, clear the screen, retitle the
// terminal or hide a line through it. With colored, the lines are then
// coloured by the diff's grammar (render.DiffPainter).
type TermSafe struct {
	w     io.Writer
	paint *render.DiffPainter
	line  []byte // a line not finished yet
	buf   bytes.Buffer
}

func NewTermSafe(w io.Writer, colored bool) *TermSafe {
	t := &TermSafe{w: w}
	if colored {
		t.paint = &render.DiffPainter{}
	}
	return t
}

func (t *TermSafe) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.line = append(t.line, p...)
			break
		}
		t.line = append(t.line, p[:i]...)
		t.emit()
		t.buf.WriteByte('\n')
		p = p[i+1:]
	}
	if t.buf.Len() >= 32<<10 {
		return n, t.Flush()
	}
	return n, nil
}

func (t *TermSafe) emit() {
	l := render.Safe(string(t.line))
	if t.paint != nil {
		l = t.paint.Paint(l)
	}
	t.buf.WriteString(l)
	t.line = t.line[:0]
}

// Flush writes what is held, an unfinished last line included.
func (t *TermSafe) Flush() error {
	if len(t.line) > 0 {
		t.emit()
	}
	_, err := t.w.Write(t.buf.Bytes())
	t.buf.Reset()
	return err
}

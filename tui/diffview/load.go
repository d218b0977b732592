package diffview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// MaxLines and MaxBytes bound what the view keeps of a diff: a worker
// that rewrote a vendored tree must not fill the dashboard's memory. The
// rest is for `zwarm diff ID`, which streams it to a pager.
const (
	MaxLines = 10000
	MaxBytes = 2 << 20
)

// Source is what the view needs to load a diff; *sessions.Manager
// satisfies it.
type Source interface {
	Diff(ctx context.Context, idOrPrefix string, out io.Writer, req sessions.DiffRequest) (*record.Session, error)
}

// LoadedMsg is a session's diff, as the view shows it.
type LoadedMsg struct {
	ID string
	// seq says which opening of the view asked for it.
	seq     int
	Session *record.Session
	// Lines are safe to show: see displayLines.
	Lines []string
	// Cut, if not "", says how much was kept of a longer diff ("the first
	// 10000 lines").
	Cut string
	Err error
}

// Load reads session id's diff off the UI goroutine, coloured when color, the first MaxLines lines or MaxBytes bytes at most. seq is
// what Open returned.
func Load(ctx context.Context, src Source, id string, seq int, color bool) tea.Cmd {
	return func() tea.Msg { return load(ctx, src, id, seq, color, MaxLines, MaxBytes) }
}

func load(ctx context.Context, src Source, id string, seq int, color bool, maxLines, maxBytes int) LoadedMsg {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Once the bound is reached, git is stopped rather than read to its
	// end: the rest of a huge diff is never produced.
	c := &clip{maxLines: maxLines, maxBytes: maxBytes, stop: cancel}
	s, err := src.Diff(ctx, id, c, sessions.DiffRequest{Options: workspace.DiffOptions{Format: workspace.Patch}})
	msg := LoadedMsg{ID: id, seq: seq, Session: s}
	switch {
	case c.cut:
		msg.Cut = c.kept() // git's error is the stop
	case errors.Is(err, sessions.ErrInPlace):
		msg.Err = err // written for people as it is
	case err != nil:
		msg.Err = fmt.Errorf("cannot show the diff of %s: %w", record.ShortID(id), err)
	}
	msg.Lines = displayLines(c.buf, color)
	return msg
}

// clip keeps the first lines of what is written to it, up to maxLines
// lines and maxBytes bytes, and calls stop when more comes. It never
// fails a write, so git is stopped by stop, not by a broken pipe.
type clip struct {
	buf                []byte
	lines              int
	maxLines, maxBytes int
	cut                bool
	stop               func()
}

func (c *clip) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && !c.cut {
		line := p
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			line = p[:i+1]
		}
		if c.lines >= c.maxLines || len(c.buf)+len(line) > c.maxBytes {
			c.cutHere(line)
			break
		}
		c.buf = append(c.buf, line...)
		if line[len(line)-1] == '\n' {
			c.lines++
		}
		p = p[len(line):]
	}
	return n, nil
}

// cutHere stops the copy before line: it keeps whole lines only, unless
// the first line alone is too long.
func (c *clip) cutHere(line []byte) {
	if c.lines < c.maxLines {
		c.buf = append(c.buf, line[:max(0, c.maxBytes-len(c.buf))]...)
		if i := bytes.LastIndexByte(c.buf, '\n'); i >= 0 {
			c.buf = c.buf[:i+1]
		}
	}
	c.cut = true
	c.stop()
}

// kept says how much of the diff was kept.
func (c *clip) kept() string {
	if c.lines >= c.maxLines {
		return fmt.Sprintf("the first %d lines", c.lines)
	}
	return fmt.Sprintf("the first %d lines (%.1f MB)", c.lines, float64(len(c.buf))/(1<<20))
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/render"
	"golang.org/x/sys/unix"
)

// termPrompt puts a run's question to the person at the terminal that
// runs it: the question and its options on stderr (unless stdout, a
// terminal too, shows them), the answer a line of stdin. When the answer
// comes another way first, it stops reading and drops what was typed, so
// nothing half-typed reaches the shell later.
type termPrompt struct {
	io   *cli.Streams
	in   *os.File
	hint string // how else to answer: zwarm runs answer ID
}

// newTermPrompt is the prompt of a command whose stdin and stderr are a
// terminal, or nil.
func newTermPrompt(s *cli.Streams, hint string) *termPrompt {
	in, ok := s.In.(*os.File)
	if !ok || !s.InTTY || !s.ErrTTY {
		return nil
	}
	return &termPrompt{io: s, in: in, hint: hint}
}

func (p *termPrompt) ask(ctx context.Context, q runs.Question) (string, error) {
	// On a terminal stdout, the run's steps show the question and its
	// options just above.
	var b strings.Builder
	if !p.io.OutTTY {
		b.WriteString("? " + render.SafeLine(q.Text) + "\n")
		for i, o := range q.Options {
			fmt.Fprintf(&b, "  %d) %s\n", i+1, render.SafeLine(o))
		}
	}
	prompt := "your answer"
	if len(q.Options) > 0 {
		prompt += fmt.Sprintf(" (1-%d or your own words)", len(q.Options))
	}
	prompt += ": "
	if !foreground(p.in) {
		// A read would stop the whole run (SIGTTIN) until it is brought
		// back: it waits for runs answer instead.
		fmt.Fprintf(&b, "  the run is in the background: %s \"...\" answers it\n", p.hint)
		io.WriteString(p.io.ErrOut, b.String())
		return "", errBackground
	}
	fmt.Fprintf(&b, "  (or from elsewhere: %s \"...\")\n%s", p.hint, p.io.Paint(cli.Bold, prompt))
	io.WriteString(p.io.ErrOut, b.String())
	for {
		line, err := readLine(ctx, p.in)
		switch {
		case ctx.Err() != nil:
			io.WriteString(p.io.ErrOut, "\n")
			return "", ctx.Err()
		case errors.Is(err, errBackground):
			fmt.Fprintf(p.io.ErrOut, "\nthe run went to the background; %s \"...\" answers it\n", p.hint)
			return "", err
		case errors.Is(err, io.EOF):
			fmt.Fprintf(p.io.ErrOut, "\nno answer from this terminal; %s \"...\" answers it\n", p.hint)
			return "", err
		case err != nil:
			return "", err
		}
		if line = strings.TrimSpace(line); line != "" {
			text, n, err := q.Pick(line)
			if err == nil {
				if n > 0 {
					fmt.Fprintf(p.io.ErrOut, "option %d: %s\n", n, render.SafeLine(text))
				}
				return text, nil
			}
			// A number that is no option's: asked again, saying why.
			fmt.Fprintf(p.io.ErrOut, "%v\n", err)
		}
		io.WriteString(p.io.ErrOut, p.io.Paint(cli.Bold, prompt))
	}
}

// errBackground: the process is not in the terminal's foreground, where
// reading the terminal would stop it.
var errBackground = errors.New("the run is not in the terminal's foreground")

// foreground says the process is in the foreground process group of the
// terminal f.
func foreground(f *os.File) bool {
	pgrp, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// readLine reads a line from a terminal until ctx ends. It waits in
// poll(2) on the terminal and on a pipe that is closed when ctx ends, so
// it never leaves a read blocked behind. Input typed but not entered when
// ctx ends is discarded.
func readLine(ctx context.Context, f *os.File) (string, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer pr.Close()
	var once sync.Once
	closeW := func() { once.Do(func() { pw.Close() }) }
	defer closeW()
	stop := context.AfterFunc(ctx, closeW)
	defer stop()
	fd, cancelFD := int(f.Fd()), int(pr.Fd())
	var line []byte
	buf := make([]byte, 4096)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(cancelFD), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return "", err
		}
		if fds[1].Revents != 0 {
			unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH)
			return "", ctx.Err()
		}
		if fds[0].Revents == 0 {
			continue
		}
		if !foreground(f) {
			return "", errBackground
		}
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			return "", err
		}
		if n == 0 {
			return "", io.EOF
		}
		line = append(line, buf[:n]...)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			return string(line[:i]), nil
		}
	}
}

// askSettings decides whether a run offers ask_user and where it asks:
// never with --no-ask; on the terminal if stdin and stderr are one;
// else only with [orchestrator] ask, through zwarm runs answer.
func askSettings(s *cli.Streams, set *orchestrator.Settings, noAsk bool, hint string) *termPrompt {
	if noAsk {
		set.Ask = false
		return nil
	}
	p := newTermPrompt(s, hint)
	set.Ask = set.Ask || p != nil
	return p
}

package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// drainGrace bounds how long output is still read after the process exited.
// It normally ends at once, when the last holder of the terminal or pipe
// closes it; a background child that keeps it open would hold it forever.
const drainGrace = 100 * time.Millisecond

// spec describes a command to start.
type spec struct {
	shell, flag, cmd, dir string
	env                   []string
	tty                   bool
	cgroup                *os.File // the cgroup to start in, or nil
}

// process is one running command and the owner of its goroutines.
type process struct {
	id   int
	pid  int // also its process group and session id
	cmd  *exec.Cmd
	tty  bool
	out  *os.File      // PTY master, or the read end of the output pipe
	in   *os.File      // PTY master again, or the write end of the stdin pipe
	busy chan struct{} // held by the one call using the process
	done chan struct{} // closed once it exited and its output was drained
	code int           // exit code, set before done is closed

	mu  sync.Mutex
	buf headTail
}

// start runs s in a new session: under a new PTY of 24x80 that becomes its
// controlling terminal, or with pipes (stdout and stderr merged) and no
// terminal at all, so it can never reach the orchestrator's own terminal.
// The returned process is busy (held by the caller); own must run next.
func start(s spec) (*process, error) {
	cmd := exec.Command(s.shell, s.flag, s.cmd)
	cmd.Dir = s.dir
	cmd.Env = s.env
	p := &process{cmd: cmd, tty: s.tty, busy: make(chan struct{}, 1), done: make(chan struct{}), buf: newHeadTail(bufferLimit)}
	p.busy <- struct{}{}
	if s.tty {
		attrs := &syscall.SysProcAttr{Setsid: true, Setctty: true}
		s.join(attrs)
		master, err := pty.StartWithAttrs(cmd, &pty.Winsize{Rows: 24, Cols: 80}, attrs)
		if err != nil {
			return nil, startError(s, err)
		}
		if p.out, err = pollable(master); err != nil {
			_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
			_ = cmd.Wait()
			return nil, err
		}
		p.in = p.out
	} else {
		outR, outW, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("output pipe: %w", err)
		}
		inR, inW, err := os.Pipe()
		if err != nil {
			outR.Close()
			outW.Close()
			return nil, fmt.Errorf("input pipe: %w", err)
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, outW
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		s.join(cmd.SysProcAttr)
		err = cmd.Start()
		outW.Close() // the child holds its own copies
		inR.Close()
		if err != nil {
			outR.Close()
			inW.Close()
			return nil, startError(s, err)
		}
		p.out, p.in = outR, inW
	}
	p.pid = cmd.Process.Pid
	return p, nil
}

func startError(s spec, err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("start %s %s: %w; pass an installed shell such as /bin/bash in shell", s.shell, s.flag, err)
	}
	return fmt.Errorf("start %s %s: %w", s.shell, s.flag, err)
}

// pollable returns a non-blocking duplicate of the PTY master, registered
// with the runtime poller, and closes the original. The PTY library leaves
// the master in blocking mode, where a read cannot be given a deadline nor
// interrupted by Close: a background grandchild holding the terminal open
// would then pin the reading goroutine forever.
func pollable(master *os.File) (*os.File, error) {
	defer master.Close()
	fd, err := unix.FcntlInt(master.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("duplicate pty master: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("pty master non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), master.Name()), nil
}

// own waits for the process, drains its output and records its exit. It is
// the process's owner goroutine; ending the process (Manager.Close) ends it.
func (p *process) own(log *slog.Logger) {
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		p.read(log)
	}()
	if err := p.cmd.Wait(); err != nil && p.cmd.ProcessState == nil {
		log.Warn("shell: wait", "session", p.id, "pid", p.pid, "err", err)
	}
	p.code = exitCode(p.cmd.ProcessState)
	// What the process wrote just before exiting may still be in flight
	// through the terminal: read on until the end or the grace passes.
	if err := p.out.SetReadDeadline(time.Now().Add(drainGrace)); err != nil {
		log.Warn("shell: output deadline", "session", p.id, "err", err)
	}
	<-readDone
	p.out.Close()
	if p.in != p.out {
		p.in.Close()
	}
	log.Debug("shell: process exited", "session", p.id, "pid", p.pid, "code", p.code)
	close(p.done)
}

// read copies output into the buffer as it comes, so the process never
// blocks on a full terminal or pipe however long nobody polls it.
func (p *process) read(log *slog.Logger) {
	buf := make([]byte, 32<<10)
	var (
		nl   crlf
		norm []byte
	)
	late := 0
	for {
		n, err := p.out.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) && late < maxLateReads {
			// The runtime checks the deadline before it reads: a reader
			// that got here late would lose what the process wrote before
			// it exited and the kernel already holds. Take that, without
			// waiting for more.
			late++
			n, err = p.readBuffered(buf)
		}
		chunk := buf[:n]
		if p.tty {
			norm = nl.apply(norm[:0], chunk)
			if err != nil {
				norm = nl.flush(norm)
			}
			chunk = norm
		}
		if len(chunk) > 0 {
			p.mu.Lock()
			p.buf.write(chunk)
			p.mu.Unlock()
		}
		if err != nil {
			// A PTY master reads EIO once the last slave is closed: that
			// is its end of file.
			if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.EIO) && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, os.ErrClosed) {
				log.Warn("shell: read output", "session", p.id, "err", err)
			}
			return
		}
	}
}

// maxLateReads bounds the reads after the drain's deadline, so a background
// child that keeps writing cannot hold the owner.
const maxLateReads = 256

// readBuffered reads what the kernel holds for p.out now, without waiting
// and whatever its deadline: os.ErrDeadlineExceeded when nothing is there,
// io.EOF or the read's error at the end.
func (p *process) readBuffered(buf []byte) (int, error) {
	rc, err := p.out.SyscallConn()
	if err != nil {
		return 0, err
	}
	var (
		n    int
		rerr error
	)
	if err := rc.Control(func(fd uintptr) {
		// Both the pipe and the PTY master are non-blocking (see pollable).
		n, rerr = unix.Read(int(fd), buf)
	}); err != nil {
		return 0, err
	}
	switch {
	case errors.Is(rerr, unix.EAGAIN) || errors.Is(rerr, unix.EINTR):
		return 0, os.ErrDeadlineExceeded
	case rerr != nil:
		return 0, rerr
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// exitCode is the shell's view of how the process ended: its exit status,
// or 128+N when signal N killed it.
func exitCode(state *os.ProcessState) int {
	if state == nil {
		return -1
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return state.ExitCode()
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// acquire makes the caller the process's only user until release.
func (p *process) acquire(ctx context.Context) error {
	select {
	case p.busy <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *process) release() { <-p.busy }

// take returns the output buffered since the last take; while the process
// runs, an incomplete trailing character waits for its remaining bytes.
func (p *process) take() (head, tail string, omitted int) {
	hold := !p.exited()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.take(hold)
}

// write sends chars to the process's input, giving up at deadline or when
// ctx ends: a process that does not read its input must not hang the call.
func (p *process) write(ctx context.Context, chars string, deadline time.Time) error {
	if err := p.in.SetWriteDeadline(deadline); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = p.in.SetWriteDeadline(time.Now()) })
	defer stop()
	n, err := io.WriteString(p.in, chars)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("wrote %d of %d bytes before the yield time passed: the process is not reading its input", n, len(chars))
	}
	return err
}

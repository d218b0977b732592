package cli

import (
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// ForegroundCmd runs a command as a shell runs a job in the foreground:
// in a process group of its own that the terminal sends its signals to
// (Ctrl+C, Ctrl+\), so they reach it and not the program that started
// it, which takes the terminal back when it ends. Its Set methods make
// it what Bubble Tea's Exec runs.
type ForegroundCmd struct {
	*exec.Cmd
}

func (c ForegroundCmd) SetStdin(r io.Reader)  { c.Stdin = r }
func (c ForegroundCmd) SetStdout(w io.Writer) { c.Stdout = w }
func (c ForegroundCmd) SetStderr(w io.Writer) { c.Stderr = w }

// Run runs the command to its end. Where its input is not a terminal it
// runs as a plain child.
func (c ForegroundCmd) Run() error {
	tty, ok := c.Stdin.(*os.File)
	if !ok || !IsTerminal(tty) {
		return c.Cmd.Run()
	}
	fd := int(tty.Fd())
	c.SysProcAttr = &syscall.SysProcAttr{Foreground: true, Ctty: fd}
	err := c.Cmd.Run()
	// Taking the terminal back from the background, as it now is, stops
	// this process (SIGTTOU) unless that signal is ignored meanwhile.
	signal.Ignore(syscall.SIGTTOU)
	unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, unix.Getpgrp())
	signal.Reset(syscall.SIGTTOU)
	return err
}

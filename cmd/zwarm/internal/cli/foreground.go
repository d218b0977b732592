package cli

import (
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

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
	if err := c.Start(); err != nil {
		c.takeBack(fd)
		return err
	}
	// Nobody here can bring a job stopped by Ctrl+Z (a CLI suspending
	// itself and its group) back to the foreground, as a shell would: it
	// is continued at once, or it would hold the terminal for good.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		continueStopped(c.Process.Pid, stop)
	}()
	err := c.Wait()
	close(stop)
	wg.Wait()
	c.takeBack(fd)
	return err
}

// takeBack makes this process's group the terminal's foreground again.
func (c ForegroundCmd) takeBack(fd int) {
	// Taking the terminal back from the background, as it now is, stops
	// this process (SIGTTOU) unless that signal is ignored meanwhile.
	signal.Ignore(syscall.SIGTTOU)
	unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, unix.Getpgrp())
	signal.Reset(syscall.SIGTTOU)
}

// continueStopped sends SIGCONT to pid's process group whenever pid has
// stopped, until stop closes. (It looks ten times a second: a wait that
// blocked for a stop would not end when pid is waited for.)
func continueStopped(pid int, stop <-chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WNOHANG, nil)
		switch {
		case err != nil:
			return // waited for already
		case info.Signo != 0: // it stopped: a child found in that state
			unix.Kill(-pid, unix.SIGCONT)
		}
	}
}

package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Reaped is a child run as init runs one in a container (Run).
type Reaped struct {
	Argv, Env []string
	// Forward are the signals passed on to the child.
	Forward []os.Signal
	// Ignore are ignored in the child from its start, as a command that
	// inherits them ignored has them, until it takes them up: this
	// process ignores them until the child has started (the runtime's
	// own handlers would otherwise give the child their defaults), then
	// forwards those in Forward.
	Ignore []os.Signal
}

// Run runs the child and waits for it: this process is made a child
// subreaper, so whatever the child leaves behind (its orphans, a daemon
// that called setsid, all its descendants once it is gone) becomes this
// process's child, and once the child has exited, everything it left is
// killed and reaped. It returns the child's exit code (128+n for a death
// by signal n).
//
// It is for the main process of a batch job: a scheduler tracking a job
// by descent (Slurm's proctrack/linuxproc) loses a process whose parent
// died, so a supervisor killed outright would leave its agent running
// after the job; under Run nothing outlives the job's main process but
// by a SIGKILL to that process itself, which a scheduler sends to the
// whole job. ctx ending kills the child as its parent dying would.
func (r Reaped) Run(ctx context.Context) (int, error) {
	argv := r.Argv
	if len(argv) == 0 {
		return 0, errors.New("run reaped: no command")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 0, os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = r.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	signal.Ignore(r.Ignore...)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, append([]os.Signal{syscall.SIGCHLD}, r.Forward...)...)
	defer signal.Stop(sigs)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var werr error
wait:
	for {
		select {
		case s := <-sigs:
			if s == syscall.SIGCHLD {
				reapExited(cmd.Process.Pid)
				continue
			}
			cmd.Process.Signal(s)
		case <-ctx.Done():
			cmd.Process.Kill()
		case werr = <-exited:
			break wait
		}
	}
	reapOrphans()
	code := cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return code, werr
	}
	return code, nil
}

// reapExited reaps this process's children that have exited, but the one
// its caller waits for (keep), whose status cmd.Wait takes: a subreaper is
// the parent of each orphan its child leaves, and one that has exited is a
// zombie until reaped, for as long as the child runs (SIGCHLD says when).
func reapExited(keep int) {
	for _, pid := range children() {
		if pid != keep {
			var ws unix.WaitStatus
			unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
	}
}

// reapOrphans kills this process's children (what the reaped child left,
// re-parented here) and reaps them, until none is left: the children of
// one killed come here in turn. A process the kernel cannot kill yet (in
// an uninterruptible wait) is given reapLimit, then left to the
// scheduler's end of the job.
func reapOrphans() {
	deadline := time.Now().Add(reapLimit)
	for time.Now().Before(deadline) {
		kids := children()
		for _, pid := range kids {
			unix.Kill(pid, unix.SIGKILL)
		}
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.ECHILD):
			return // nothing left, not even a zombie
		case err == nil && pid > 0:
			continue
		}
		if len(kids) == 0 {
			// A child between its parent's death and its re-parenting:
			// a moment later it is here.
			time.Sleep(10 * time.Millisecond)
		} else {
			time.Sleep(time.Millisecond)
		}
	}
}

const reapLimit = 30 * time.Second

// children are this process's children, from /proc's list of each of
// its threads' children (a re-parented orphan is a child of the thread
// that is the subreaper, whichever it is).
func children() []int {
	files, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(field); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Guard runs an agent for its supervisor, between the two: the agent's
// descendants that leave its process group and its session (a tool
// command Claude Code starts with setsid) are re-parented here as their
// parents die, not to init, so that when the supervisor is killed
// outright (its death signal, Orphaned, reaches this process) every one
// of them is killed at once. Without it they ran on, unsupervised, until
// a later zwarm command came upon the dead supervisor.
type Guard struct {
	Argv []string
	// Orphaned is the signal the supervisor has the kernel send this
	// process when it dies (its death signal): SIGUSR2, which nothing
	// else sends the agent's group.
	Orphaned syscall.Signal
	// DiedFile, if set, is where the supervisor's death is written when
	// it is heard, as "PID TIME" (RFC 3339): the moment a reader that
	// comes upon it later records as the session's end.
	DiedFile string
}

// GuardOrphaned is the death signal a supervisor gives a guard.
const GuardOrphaned = syscall.SIGUSR2

// Run runs the agent and waits for it. It returns the agent's exit code,
// 128+n for a death by signal n, as the supervisor reads a status: a
// guard that exits so reads as the agent would have. The stop signals
// (SIGTERM, SIGINT) that the supervisor sends the process group reach
// the agent as they did; here they are caught and dropped (not ignored,
// which the agent would inherit).
func (g Guard) Run() (int, error) {
	if len(g.Argv) == 0 {
		return 0, errors.New("guard: no command")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 0, os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", err)
	}
	// Orphaned before this, the process ends by its default action,
	// before the agent starts; after it, the loop below hears it.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, g.Orphaned, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	defer signal.Stop(sigs)
	supervisor := os.Getppid()
	cmd := exec.Command(g.Argv[0], g.Argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The guard killed outright takes the agent with it; what it leaves
	// goes to the supervisor, a subreaper too, which sweeps it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			if s == syscall.SIGCHLD {
				reapExited(cmd.Process.Pid) // orphans that ended
				continue
			}
			if s != g.Orphaned {
				continue
			}
			if g.DiedFile != "" {
				os.WriteFile(g.DiedFile, fmt.Appendf(nil, "%d %s\n", supervisor, time.Now().UTC().Format(time.RFC3339Nano)), 0o600)
			}
			cmd.Process.Kill()
			<-exited
			reapOrphans()
			return 128 + int(syscall.SIGKILL), nil
		case err := <-exited:
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				return 0, err
			}
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return 128 + int(ws.Signal()), nil
			}
			// What the agent left running goes to the supervisor once
			// this process is gone: its sweep, as without a guard.
			return cmd.ProcessState.ExitCode(), nil
		}
	}
}

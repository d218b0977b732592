package supervisor

import (
	"context"
	"os"
	"syscall"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"golang.org/x/sys/unix"
)

// runSetup runs the [worktrees] setup command (sh -c) in a new worktree,
// contained as an agent is: a process group and a cgroup leaf of its own,
// the session's marker in its environment, SIGKILL if the supervisor
// dies. It writes its output straight to the setup log. A stop (ctx)
// gives it SIGTERM, the grace period, then SIGKILL. Whatever it leaves
// running when it exits is stopped: it prepares the worktree, it does not
// serve the agent.
func (sv *supervisor) runSetup(ctx context.Context, dir, command string, out *os.File, grace time.Duration) (int, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if sv.cg != nil {
		if err := sv.cg.newLeaf(); err == nil {
			attr.UseCgroupFD, attr.CgroupFD = true, sv.cg.fd
		} else {
			sv.log.Warn("no cgroup leaf for setup; containing it by marker", "err", err)
		}
	}
	env := append(os.Environ(), proc.MarkerEnv+"="+sv.id)
	pa := &os.ProcAttr{Dir: dir, Env: env, Files: []*os.File{devnull, out, out}, Sys: attr}
	p, err := os.StartProcess("/bin/sh", []string{"sh", "-c", command}, pa)
	if err != nil && attr.UseCgroupFD {
		attr.UseCgroupFD, attr.CgroupFD = false, 0
		p, err = os.StartProcess("/bin/sh", []string{"sh", "-c", command}, pa)
	}
	if err != nil {
		return 0, err
	}
	pid := p.Pid
	p.Release() // waited for below, by pid
	exited := make(chan unix.WaitStatus, 1)
	go func() {
		var ws unix.WaitStatus
		for {
			_, err := unix.Wait4(pid, &ws, 0, nil)
			if err != unix.EINTR {
				break
			}
		}
		exited <- ws
	}()
	var ws unix.WaitStatus
	select {
	case ws = <-exited:
	case <-ctx.Done():
		sigGroup(pid, unix.SIGTERM)
		select {
		case ws = <-exited:
		case <-time.After(grace):
			sigGroup(pid, unix.SIGKILL)
			ws = <-exited
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sv.sweep(sctx); err != nil {
		sv.log.Error("sweep after setup", "err", err)
	}
	return exitCode(ws), nil
}

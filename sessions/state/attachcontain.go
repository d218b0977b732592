package state

import (
	"context"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/proc"
)

// AttachContainment holds what a person's CLI starts while they are
// attached to a session (zwarm attach) as a supervisor holds its agents:
// the session's marker in their environment, and the session's cgroup
// where the machine gives zwarm one (recorded as a supervisor records
// it, so that a kill finds what an attach that died left). A server the
// person starts in the background is swept when they leave, as a turn's
// is when the turn ends.
type AttachContainment struct {
	c   Cgroups
	dir string
	fd  int // the cgroup's directory, open; -1: none
}

// ContainAttach makes the containment of a person's CLI in session id.
func (s *Store) ContainAttach(id string) *AttachContainment {
	k := &AttachContainment{c: Cgroups{s, id}, fd: -1}
	dir, err := k.c.Make()
	if err != nil {
		return k // no cgroup here: the marker alone
	}
	k.c.Tag(dir)
	if k.c.Record(dir) != nil {
		os.Remove(dir)
		return k
	}
	k.dir = dir
	if fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		k.fd = fd
	}
	return k
}

// Command makes cmd start contained: with the marker, and in the cgroup
// unless inCgroup is false (a cgroup the process cannot be started in).
func (k *AttachContainment) Command(cmd *exec.Cmd, inCgroup bool) {
	cmd.Env = append(cmd.Env, proc.MarkerEnv+"="+k.c.id)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = inCgroup && k.fd >= 0, k.fd
}

// InCgroup reports whether a command can be started in the cgroup.
func (k *AttachContainment) InCgroup() bool { return k.fd >= 0 }

// Sweep kills whatever is left of what the CLI started, and removes the
// cgroup.
func (k *AttachContainment) Sweep(ctx context.Context) error {
	if k.fd >= 0 {
		unix.Close(k.fd)
		k.fd = -1
	}
	err := proc.Scope{ID: k.c.id, Cgroup: k.dir}.Sweep(ctx)
	if k.dir != "" && proc.SweepCgroup(ctx, k.dir) == nil {
		k.c.Forget()
	}
	return err
}

package proc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A Group is a cgroup zwarm makes for processes that are not a session's
// agents, such as an orchestrated run's shell commands: made beside the
// sessions' cgroups (zwarm-<name> under the cgroup zwarm runs in),
// joined by each process as it starts (clone3 into its directory, see
// File), and swept as a whole, however its processes left their session
// or their process group. Its owner records Dir, so that whoever finds
// the owner dead can sweep what it left.
type Group struct {
	dir string
	f   *os.File
}

// MakeGroup makes (or reuses) the cgroup zwarm-<name> and opens it. It
// fails where the machine gives zwarm no cgroups (Containment says why);
// callers fall back to what they can do without one.
func MakeGroup(name string) (*Group, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("cgroup: bad group name %q", name)
	}
	dir, err := MakeCgroup(name)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	return &Group{dir: dir, f: os.NewFile(uintptr(fd), dir)}, nil
}

// Tag marks the group as stateDir's, as a supervisor tags its session's
// cgroup: kill --orphans of that state dir stops what is left in it once
// its owner's record is gone.
func (g *Group) Tag(stateDir string) error {
	return unix.Setxattr(g.dir, StateXattr, []byte(stateDir), 0)
}

// Dir is the group's cgroup directory, for the owner's record.
func (g *Group) Dir() string { return g.dir }

// File is open on the group's directory: a process started with
// SysProcAttr{UseCgroupFD: true, CgroupFD: int(File().Fd())} starts in it.
func (g *Group) File() *os.File { return g.f }

// Close kills every process left in the group and below it, removes its
// cgroups and closes its file.
func (g *Group) Close(ctx context.Context) error {
	err := SweepGroup(ctx, g.dir)
	g.f.Close()
	return err
}

// checkGroupDir accepts only a cgroup zwarm made: a directory named
// zwarm-* inside the mounted cgroup v2 hierarchy. A recorded path is read
// back from a file anyone with the state dir could have changed.
func checkGroupDir(dir string) error {
	mount, _, err := Cgroup2Mount()
	if err != nil {
		return err
	}
	clean := filepath.Clean(dir)
	if !filepath.IsAbs(dir) || clean != dir || !strings.HasPrefix(clean, mount+"/") || !strings.HasPrefix(filepath.Base(clean), "zwarm-") {
		return fmt.Errorf("cgroup: %q is not a cgroup zwarm made", dir)
	}
	return nil
}

// GroupPIDs lists the processes in a group's cgroup and below it; nothing
// for a path that is not a zwarm cgroup or is gone.
func GroupPIDs(dir string) []int {
	if checkGroupDir(dir) != nil {
		return nil
	}
	return CgroupPIDs(dir)
}

// SweepGroup kills every process in a group's cgroup and below it and
// removes the cgroups; a group already gone is swept. It refuses a path
// that is not a zwarm cgroup.
func SweepGroup(ctx context.Context, dir string) error {
	if err := checkGroupDir(dir); err != nil {
		return err
	}
	return SweepCgroup(ctx, dir)
}

package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zwarm/zwarm/sessions/proc"
	"golang.org/x/sys/unix"
)

// A session's agents run in a cgroup v2 of their own when the machine
// allows it (see proc.Containment). The supervisor makes it, beside
// itself, and each agent process runs in a leaf of its own below it: a
// cgroup that was once killed must not take new processes (the kernel
// kills those too), and killing the session's cgroup kills the leaves with
// it. Where no cgroup can be made, the session is contained by its marker
// variable and the supervisor's descendants.

// cgroup is a session's cgroup.
type cgroup struct {
	dir  string
	seq  int
	leaf string // the running agent's leaf
	fd   int    // open on leaf, for clone3 into it; -1 when none
}

// newLeaf makes the cgroup the next agent process starts in.
func (cg *cgroup) newLeaf() error {
	cg.closeLeaf()
	cg.seq++
	leaf := filepath.Join(cg.dir, fmt.Sprintf("agent-%d", cg.seq))
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cgroup: %w", err)
	}
	fd, err := unix.Open(leaf, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(leaf)
		return fmt.Errorf("cgroup: %w", err)
	}
	cg.leaf, cg.fd = leaf, fd
	return nil
}

// closeLeaf kills what is left in the current leaf and removes it.
func (cg *cgroup) closeLeaf() error {
	if cg.leaf == "" {
		return nil
	}
	unix.Close(cg.fd)
	leaf := cg.leaf
	cg.leaf, cg.fd = "", -1
	return proc.SweepCgroup(context.Background(), leaf)
}

// openCgroup gives the supervisor's session a cgroup, or nil when the
// machine does not allow it (the log says why).
func (sv *supervisor) openCgroup() *cgroup {
	dir, err := sv.turns.Cgroups.Make()
	if err != nil {
		sv.log.Info("no cgroup for the session; containing it by marker", "why", err)
		return nil
	}
	if err := sv.turns.Cgroups.Tag(dir); err != nil {
		sv.log.Warn("cannot tag the session's cgroup with its state dir; kill --orphans will not know it", "err", err)
	}
	if err := sv.turns.Cgroups.Record(dir); err != nil {
		sv.log.Warn("cannot record the session's cgroup; containing it by marker", "err", err)
		os.Remove(dir)
		return nil
	}
	return &cgroup{dir: dir, fd: -1}
}

// closeCgroup removes the session's cgroup once nothing runs in it.
func (sv *supervisor) closeCgroup() {
	if sv.cg == nil {
		return
	}
	sv.cg.closeLeaf()
	if err := proc.SweepCgroup(context.Background(), sv.cg.dir); err != nil {
		sv.log.Error("remove the session's cgroup", "err", err)
	} else {
		sv.turns.Cgroups.Forget()
	}
	sv.cg = nil
}

func (sv *supervisor) containment() string {
	if sv.cg != nil {
		return "cgroup " + sv.cg.dir
	}
	return "marker"
}

// sweep kills every process of the session: what is in its cgroup, what
// carries its marker and what descends from the supervisor.
func (sv *supervisor) sweep(ctx context.Context) error {
	cg := ""
	if sv.cg != nil {
		cg = sv.cg.dir
	}
	return sv.turns.Cgroups.Sweep(ctx, cg)
}

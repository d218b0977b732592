package state

import (
	"context"
	"os"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/proc"
)

// Cgroups is a session's cgroup as its supervisor contains the session's
// processes in it.
type Cgroups struct {
	st *Store
	id string
}

// Make creates (or reuses) the session's cgroup, zwarm-<id> beside
// the cgroup this process runs in, and returns its directory.
func (c Cgroups) Make() (string, error) { return proc.MakeCgroup(c.id) }

// Tag names, on the session's cgroup dir, the state dir the session
// is recorded in: a cgroup whose session is gone from it is an orphan (see
// Orphans).
func (c Cgroups) Tag(dir string) error {
	return unix.Setxattr(dir, proc.StateXattr, []byte(c.st.Dir()), 0)
}

// Record writes the session's cgroup dir to sessions/<id>/cgroup,
// where a kill finds it without the record.
func (c Cgroups) Record(dir string) error {
	return c.st.WriteFileAtomic(c.st.CgroupFile(c.id), []byte(dir+"\n"))
}

// Forget removes the record of the session's cgroup, once removed.
func (c Cgroups) Forget() { c.st.ForgetCgroup(c.id) }

// Sweep kills every process of the session until none is left: those in
// cgroup (its dir, or ""), those carrying the session's marker and the
// descendants of this process, the supervisor, which is never listed.
func (c Cgroups) Sweep(ctx context.Context, cgroup string) error {
	return proc.Scope{ID: c.id, Root: os.Getpid(), Cgroup: cgroup}.Sweep(ctx)
}

package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/store"
)

// An Orphan is a session's cgroup whose session is gone from the state
// dir (its directory, or its record, was deleted while it ran): nothing
// records its processes any more, so no kill of the session can reach them.
type Orphan struct {
	ID     string // the session's id, or the run's
	Run    bool   // the cgroup of an orchestrated run (zwarm-run-<id>) whose run dir is gone
	Cgroup string
	PIDs   []int // the processes still in it (none: an empty cgroup left over)
}

// What names the orphan's owner: "session 1a2b3c4d" or "run 1a2b3c4d".
func (o Orphan) What() string {
	if o.Run {
		return "run " + record.ShortID(o.ID)
	}
	return "session " + record.ShortID(o.ID)
}

// Orphans lists the cgroups of this state dir's sessions (zwarm-<id> under
// the cgroup zwarm runs in, tagged with the state dir) whose session is
// gone or has no record. Cgroups of other state dirs, and those made where
// the tag could not be written, are not this state dir's to judge and are
// left out. A machine that gives zwarm no cgroups has none.
func (st *Store) Orphans() ([]Orphan, error) {
	parent, err := proc.OwnCgroupDir()
	if err != nil {
		return nil, nil
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		return nil, fmt.Errorf("orphans: %w", err)
	}
	var out []Orphan
	for _, e := range ents {
		if rid, ok := strings.CutPrefix(e.Name(), "zwarm-run-"); ok {
			// An orchestrated run's: its dir runs/<id> is where a resume,
			// runs kill or doctor finds it; with that gone, only this.
			dir := filepath.Join(parent, e.Name())
			if !e.IsDir() || store.ValidID(rid) != nil || !st.ownsCgroup(dir) {
				continue
			}
			if _, err := os.Lstat(filepath.Join(st.dir, "runs", rid)); !errors.Is(err, fs.ErrNotExist) {
				continue
			}
			out = append(out, Orphan{ID: rid, Run: true, Cgroup: dir, PIDs: proc.CgroupPIDs(dir)})
			continue
		}
		id, ok := strings.CutPrefix(e.Name(), "zwarm-")
		if !ok || !e.IsDir() || store.ValidID(id) != nil {
			continue // not a session's: a run's (zwarm-run-...), a probe
		}
		dir := filepath.Join(parent, e.Name())
		if !st.ownsCgroup(dir) {
			continue
		}
		if _, err := os.Lstat(st.SessionDir(id)); !errors.Is(err, fs.ErrNotExist) && !st.RecordMissing(id) {
			continue
		}
		out = append(out, Orphan{ID: id, Cgroup: dir, PIDs: proc.CgroupPIDs(dir)})
	}
	return out, nil
}

// ownsCgroup reports whether a session cgroup is tagged with this state dir.
func (st *Store) ownsCgroup(dir string) bool { return proc.TaggedFor(dir, st.dir) }

// KillOrphans kills every process in the orphaned cgroups of this state
// dir and removes them; it returns what it found.
func (st *Store) KillOrphans(ctx context.Context) ([]Orphan, error) {
	list, err := st.Orphans()
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, o := range list {
		kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := proc.KillCgroup(kctx, o.Cgroup)
		cancel()
		if err == nil {
			err = proc.RemoveCgroup(o.Cgroup)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("orphaned %s: %w", o.What(), err))
		}
	}
	return list, errors.Join(errs...)
}

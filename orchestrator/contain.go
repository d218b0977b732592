package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// A run's shell commands (exec_command) start in a cgroup of the run,
// zwarm-run-<id>, where the machine gives zwarm cgroups: however a command
// escapes its session and process group (setsid, nohup), it stays in the
// cgroup. The run records the cgroup's path in runs/<id>/cgroup while it
// has one and kills it when it ends; if the run's process dies instead
// (SIGKILL), whoever next takes the run (a resume, `zwarm runs kill`,
// `zwarm doctor`) sweeps it first. Where no cgroup can be made, commands
// are ended by their sessions only, when the run ends.

// CgroupFile names the file in a run's directory that records its cgroup.
const CgroupFile = "cgroup"

// openGroup sweeps what a dead previous owner of the run left and makes the
// run's cgroup; nil when the machine gives none (logged). The caller holds
// the run's lock.
func (r *Run) openGroup(ctx context.Context) *proc.Group {
	if _, err := sweepRecorded(ctx, r.dir); err != nil {
		r.opt.Log.Warn("orchestrator: sweep what the run's last process left", "run", r.rec.ID, "err", err)
	}
	g, err := proc.MakeGroup("run-" + r.rec.ID)
	if err != nil {
		r.opt.Log.Info("orchestrator: no cgroup for the run's commands", "run", r.rec.ID, "why", err)
		return nil
	}
	if err := g.Tag(r.opt.StateDir); err != nil {
		r.opt.Log.Warn("orchestrator: cannot tag the run's cgroup with its state dir; kill --orphans will not know it", "err", err)
	}
	// Made anew (O_EXCL after a remove), never written through a symlink.
	path := filepath.Join(r.dir, CgroupFile)
	os.Remove(path)
	if err := state.WriteFile(r.opt.StateDir, path, []byte(g.Dir()+"\n"), os.O_EXCL); err != nil {
		r.opt.Log.Warn("orchestrator: cannot record the run's cgroup; running commands without it", "err", err)
		g.Close(ctx)
		return nil
	}
	return g
}

// closeGroup kills whatever is left in the run's cgroup and forgets it.
func (r *Run) closeGroup() {
	if r.group == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.group.Close(ctx); err != nil {
		r.opt.Log.Error("orchestrator: sweep the run's cgroup", "run", r.rec.ID, "err", err)
	} else {
		os.Remove(filepath.Join(r.dir, CgroupFile))
	}
	r.group = nil
}

// sweepRecorded kills what is left in the cgroup recorded in a run's
// directory and removes it and the record; it returns the pids it found.
// The caller holds the run's lock: no process of the run is alive.
func sweepRecorded(ctx context.Context, dir string) ([]int, error) {
	path := filepath.Join(dir, CgroupFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cg := strings.TrimSpace(string(data))
	pids := proc.GroupPIDs(cg)
	if err := proc.SweepGroup(ctx, cg); err != nil {
		return pids, fmt.Errorf("run %s: %w", record.ShortID(filepath.Base(dir)), err)
	}
	os.Remove(path)
	return pids, nil
}

// KillResult is what KillRun did.
type KillResult struct {
	ID string
	// Owner is the run's process when KillRun had to stop it.
	Owner *proc.Ref
	// Swept are the processes its commands left, which KillRun killed.
	Swept []int
}

// KillRun stops a run: its process, if it still runs (SIGTERM, which
// interrupts it as Ctrl+C does, then SIGKILL if it has not ended within
// grace), and then every process its shell commands left behind. Its
// workers are sessions of their own (zwarm kill stops them).
func KillRun(ctx context.Context, stateDir, idOrPrefix string, grace time.Duration) (*KillResult, error) {
	id, err := runs.ResolveRun(stateDir, idOrPrefix)
	if err != nil {
		return nil, err
	}
	dir := runs.RunDir(stateDir, id)
	rec, err := runs.ReadRecord(dir)
	if err != nil {
		return nil, err
	}
	res := &KillResult{ID: id}
	if o := rec.Owner; o != nil && o.Alive() {
		res.Owner = o
		if o.Signal(unix.SIGTERM) == nil {
			o.Signal(unix.SIGCONT)
		}
		wctx, cancel := context.WithTimeout(ctx, grace)
		err := o.WaitGone(wctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			o.Signal(unix.SIGKILL)
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			o.WaitGone(wctx)
			cancel()
		}
	}
	lock, err := runs.LockRun(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", record.ShortID(id), err)
	}
	defer lock.Unlock()
	res.Swept, err = sweepRecorded(ctx, dir)
	return res, err
}

// Swept is what SweepDeadRuns stopped of one run.
type Swept struct {
	ID   string
	PIDs []int
}

// SweepDeadRuns kills what the shell commands of runs whose process died
// left running, for `zwarm doctor`. Live runs are left alone.
func SweepDeadRuns(ctx context.Context, stateDir string) ([]Swept, error) {
	ents, err := os.ReadDir(filepath.Join(stateDir, runs.RunsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Swept
	var errs []error
	for _, e := range ents {
		if runs.ValidID(e.Name()) != nil {
			continue
		}
		dir := filepath.Join(stateDir, runs.RunsDir, e.Name())
		if _, err := os.Lstat(filepath.Join(dir, CgroupFile)); err != nil {
			continue
		}
		lock, err := runs.LockRun(dir)
		if err != nil {
			continue // running, or being taken up
		}
		pids, err := sweepRecorded(ctx, dir)
		lock.Unlock()
		if err != nil {
			errs = append(errs, err)
		}
		if len(pids) > 0 {
			out = append(out, Swept{ID: e.Name(), PIDs: pids})
		}
	}
	return out, errors.Join(errs...)
}

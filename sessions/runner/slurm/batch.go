package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/zwarm/zwarm/sessions/runner"
)

// batchesDir holds, under a state dir's runners dir, one directory per
// batch of workers submitted as a job array: in it, a link named after
// each task's index to its session's directory. sbatch takes one output
// file name for every task of an array, with the task's index (%a) in it
// and no session's id; through the links, each task's output file is
// made in its session's directory, as a lone job's is.
const batchesDir = "slurm-batches"

var _ runner.Batcher = (*jobs)(nil)

// StartBatch submits specs as one job array named zwarm-batch-<batch>,
// task i running specs[i]'s supervisor.
func (r *jobs) StartBatch(ctx context.Context, batch string, specs []runner.Spec) ([]string, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	dir, err := linkBatch(specs, batch)
	if err != nil {
		return nil, fmt.Errorf("slurm: %w", err)
	}
	jobs := make([]Job, len(specs))
	for i, spec := range specs {
		jobs[i] = Job{Dir: spec.SessionDir, Argv: spec.Argv, SetupLog: spec.SetupLog}
	}
	array := Job{Name: batchJobName(batch), Dir: specs[0].SessionDir, Output: dir, OutputPattern: "/%a/slurm-%A_%a.out",
		Setup: r.setup, Resources: specs[0].Resources}
	ids, err := r.c.SubmitArray(ctx, array, jobs)
	if errors.Is(err, ErrUnreachable) {
		return nil, fmt.Errorf("slurm: %w: %w", runner.ErrUnreachable, err)
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("slurm: %w", err)
	}
	return ids, nil
}

// FindBatch lists the tasks of batch's job array the queue knows, when
// it knows all n.
func (r *jobs) FindBatch(ctx context.Context, batch string, n int) ([]string, error) {
	ids, err := r.c.Named(ctx, batchJobName(batch))
	if err != nil || len(ids) != n {
		return nil, err
	}
	return ids, nil
}

// linkBatch makes batch's directory of links to its sessions' directories
// and returns it. Those of earlier batches whose sessions are all gone
// go first.
func linkBatch(specs []runner.Spec, batch string) (string, error) {
	root := filepath.Join(specs[0].StateDir, runner.SeenDir, batchesDir)
	if specs[0].StateDir == "" {
		return "", errors.New("a batch needs the state dir")
	}
	pruneBatches(root)
	dir := filepath.Join(root, batch)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("make the batch's directory: %w", err)
	}
	for i, spec := range specs {
		// Relative: the state dir may be reached by another path on a
		// node (a file system mounted elsewhere).
		to, err := filepath.Rel(dir, spec.SessionDir)
		if err != nil {
			to = spec.SessionDir
		}
		if err := os.Symlink(to, filepath.Join(dir, strconv.Itoa(i))); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("link the batch's task %d to its session: %w", i, err)
		}
	}
	return dir, nil
}

// pruneBatches removes the directories of batches none of whose sessions
// is left (removed with zwarm rm): nothing can need their links. A young
// one may be another submission's, its links not made yet.
func pruneBatches(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < time.Hour {
			continue
		}
		dir := filepath.Join(root, e.Name())
		links, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		left := false
		for _, l := range links {
			if _, err := os.Stat(filepath.Join(dir, l.Name())); err == nil {
				left = true
				break
			}
		}
		if !left {
			os.RemoveAll(dir)
		}
	}
}

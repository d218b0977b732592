package slurm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/runner/slurm"
	"github.com/zwarm/zwarm/sessions/runner/slurm/slurmtest"
)

// client returns a Client of the test cluster with opts.
func client(t *testing.T, opts slurm.Options) *slurm.Client {
	t.Helper()
	opts.Env = append(opts.Env, slurmtest.Cluster(t)...)
	return slurm.New(opts)
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// shJob is a job running script with sh -c, in a fresh directory that the
// script knows as $D, writing to $D/out. The job is cancelled when the test
// ends, whatever became of it.
func shJob(t *testing.T, c *slurm.Client, script string, args ...string) (id, dir string) {
	t.Helper()
	dir = t.TempDir()
	job := slurm.Job{
		Name:   "zwarm-test-" + strings.ReplaceAll(t.Name(), "/", "-"),
		Dir:    dir,
		Output: filepath.Join(dir, "out"),
		Argv:   append([]string{"sh", "-c", script, "sh"}, args...),
		Env:    []string{"D=" + dir},
	}
	id, err := c.Submit(ctxFor(t), job)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Cancel(ctx, slurm.Ref{ID: id}); err != nil {
			t.Errorf("cancel %s at the end: %v", id, err)
		}
	})
	return id, dir
}

// waitFor polls the job's state until ok says yes, failing the test after
// limit with the last state seen. limit is a bound on a stuck test, not a
// measure of speed.
func waitFor(t *testing.T, c *slurm.Client, id, what string, limit time.Duration, ok func(slurm.State) bool) slurm.State {
	t.Helper()
	deadline := time.Now().Add(limit)
	var last slurm.State
	for {
		states, err := c.States(ctxFor(t), []string{id})
		if err != nil {
			t.Fatalf("states of %s: %v", id, err)
		}
		s, known := states[id]
		if known {
			last = s
			if ok(s) {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not %s after %v; last state %+v (known: %v)", id, what, limit, last, known)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitFile waits for a file the job writes, returning its content.
func waitFile(t *testing.T, path string, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		b, err := os.ReadFile(path)
		if err == nil && len(b) > 0 {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not written after %v", path, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func release(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "go"), []byte("go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitGo is a script fragment that holds the job until the test calls
// release, so a test sees it RUNNING for sure.
const waitGo = `while [ ! -f "$D/go" ]; do sleep 0.1; done; `

func running(s slurm.State) bool  { return s.Running() }
func terminal(s slurm.State) bool { return s.Terminal() }

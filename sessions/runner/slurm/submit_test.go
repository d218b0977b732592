package slurm_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/runner/slurm"
)

// A job runs the command exactly as given (spaces, quotes, $ and all), as
// the batch step's main process (its parent is slurmstepd, no shell in
// between), goes RUNNING then COMPLETED, and its output is in the file
// asked for.
func TestSubmitRunsToCompletion(t *testing.T) {
	t.Parallel()
	c := client(t, slurm.Options{})
	script := `echo "parent=$(cat /proc/$PPID/comm)"; echo "env=$ZW_TEST"; ` + waitGo +
		`for a in "$@"; do printf '[%s]\n' "$a"; done`
	args := []string{"a b", "it's", `"q"`, "$HOME", "back\\slash", "new\nline"}
	dir := t.TempDir()
	id, err := c.Submit(ctxFor(t), slurm.Job{
		Name:   "zwarm-test-complete",
		Dir:    dir,
		Output: filepath.Join(dir, "out"),
		Argv:   append([]string{"sh", "-c", script, "sh"}, args...),
		Env:    []string{"D=" + dir, "ZW_TEST=x 'y' \"z\" $w"},
	})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	t.Cleanup(func() { _ = c.Cancel(ctxFor(t), slurm.Ref{ID: id}) })

	s := waitFor(t, c, id, "running", time.Minute, running)
	if s.Nodes == "" {
		t.Errorf("a running job names no node: %+v", s)
	}
	release(t, dir)
	s = waitFor(t, c, id, "ended", time.Minute, terminal)
	if s.State != "COMPLETED" || s.ExitCode != "0:0" || s.Why() != "" {
		t.Fatalf("ended as %+v (why %q), want COMPLETED 0:0", s, s.Why())
	}
	out, err := os.ReadFile(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	want := "parent=slurmstepd\nenv=x 'y' \"z\" $w\n"
	for _, a := range args {
		want += "[" + a + "]\n"
	}
	if string(out) != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out, want)
	}
}

// A job that exits non-zero ends FAILED with its exit code.
func TestSubmitFailingJob(t *testing.T) {
	t.Parallel()
	c := client(t, slurm.Options{})
	id, _ := shJob(t, c, "exit 3")
	s := waitFor(t, c, id, "ended", time.Minute, terminal)
	if s.State != "FAILED" || s.ExitCode != "3:0" || s.Why() != "failed, exit 3:0" {
		t.Fatalf("ended as %+v (why %q), want FAILED 3:0", s, s.Why())
	}
}

// The output file is the one named, even when its name holds what sbatch
// would expand (%j is the job id to sbatch).
func TestSubmitOutputNameKept(t *testing.T) {
	t.Parallel()
	c := client(t, slurm.Options{})
	dir := filepath.Join(t.TempDir(), "state %j dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out%x%%.log")
	id, err := c.Submit(ctxFor(t), slurm.Job{Name: "zwarm-test-out", Dir: dir, Output: out, Argv: []string{"echo", "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := waitFor(t, c, id, "ended", time.Minute, terminal); s.State != "COMPLETED" {
		t.Fatalf("ended %+v", s)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "hello\n" {
		t.Fatalf("output %q: %q, %v", out, b, err)
	}
}

// sbatch's refusal comes back with sbatch's own words.
func TestSubmitBadPartition(t *testing.T) {
	t.Parallel()
	c := client(t, slurm.Options{Partition: "no-such-partition"})
	dir := t.TempDir()
	_, err := c.Submit(ctxFor(t), slurm.Job{Name: "zwarm-test-bad", Dir: dir, Output: filepath.Join(dir, "out"), Argv: []string{"true"}})
	if err == nil {
		t.Fatal("sbatch took a job for a partition that does not exist")
	}
	var ce *slurm.CommandError
	if !errors.As(err, &ce) || ce.Command != "sbatch" {
		t.Fatalf("error %v is not sbatch's", err)
	}
	if !strings.Contains(err.Error(), "Invalid partition name specified") {
		t.Fatalf("error %q does not carry sbatch's message", err)
	}
	if errors.Is(err, slurm.ErrUnreachable) {
		t.Fatalf("a refusal is taken for an unreachable controller: %v", err)
	}
}

// A job that cannot be written down as asked is refused before sbatch runs.
func TestSubmitBadJob(t *testing.T) {
	t.Parallel()
	c := slurm.New(slurm.Options{})
	dir := t.TempDir()
	for name, job := range map[string]slurm.Job{
		"no command":   {Name: "x", Dir: dir, Output: dir + "/out"},
		"no name":      {Dir: dir, Output: dir + "/out", Argv: []string{"true"}},
		"bad env name": {Name: "x", Dir: dir, Output: dir + "/out", Argv: []string{"true"}, Env: []string{"A-B=1"}},
		"env no =":     {Name: "x", Dir: dir, Output: dir + "/out", Argv: []string{"true"}, Env: []string{"AB"}},
		"NUL in argv":  {Name: "x", Dir: dir, Output: dir + "/out", Argv: []string{"a\x00b"}},
		"backslash":    {Name: "x", Dir: dir, Output: dir + `/o\ut`, Argv: []string{"true"}},
	} {
		if _, err := c.Submit(ctxFor(t), job); err == nil {
			t.Errorf("%s: submitted", name)
		}
	}
	if c.Calls() != 0 {
		t.Errorf("%d Slurm commands ran for jobs refused beforehand", c.Calls())
	}
}

package slurm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/runner"
)

// Slurm's warning can come as a job starts (its time limit within a
// minute), before the batch script has exec'd its command; a shell killed
// by it is a job Slurm reports as a launch failure. The script ignores it
// from its first line, and the command it execs inherits the ignore: here
// the command warns itself at once and lives on.
func TestBatchScriptOutlivesTheWarning(t *testing.T) {
	t.Parallel()
	script, err := batchScript(Job{Argv: []string{"/bin/sh", "-c", "kill -" + WarnSignal + " $$; echo lived on"}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "batch")
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/bin/sh", path).CombinedOutput()
	if err != nil || string(out) != "lived on\n" {
		t.Fatalf("the batch script warned with SIG%s: %v, output %q\n%s", WarnSignal, err, out, script)
	}
}

// A job is a session's when its name says so (zwarm-<session>); any other
// job of that id is no session's.
func TestAJobsSessionIsItsName(t *testing.T) {
	for name, want := range map[string]string{"zwarm-0199a213-81c0": "0199a213-81c0", "victim": "", "zwarm": "", "": "", "zwarm-batch-3f2a": ""} {
		if got := jobState(State{ID: "51", State: "RUNNING", Name: name}).Session; got != want {
			t.Errorf("job named %q: session %q, want %q", name, got, want)
		}
	}
	// A job array's tasks bear their batch's name.
	if st := jobState(State{ID: "51_2", State: "RUNNING", Name: "zwarm-batch-3f2a"}); st.Batch != "3f2a" ||
		!st.Runs(runner.JobRef{ID: "51_2", Session: "s", Batch: "3f2a"}) || st.Runs(runner.JobRef{ID: "51_2", Session: "s"}) {
		t.Errorf("a batch's task: %+v", st)
	}
}

// The cluster's name comes from the config file the commands read; a
// controller that cannot be asked (no ClusterName in the file, nothing
// listening) is asked once, then not again for clusterRetry.
func TestClusterNameFromTheConfig(t *testing.T) {
	dir := t.TempDir()
	named := filepath.Join(dir, "named.conf")
	os.WriteFile(named, []byte("# a lab's\nclustername = Lab-A # as it is written\n"), 0o600)
	if got := New(Options{Env: []string{"SLURM_CONF=" + named}}).Cluster(t.Context()); got != "lab-a" {
		t.Errorf("cluster of %s: %q, want lab-a", named, got)
	}
	nameless := filepath.Join(dir, "nameless.conf")
	os.WriteFile(nameless, []byte("SlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\n"), 0o600)
	c := New(Options{Env: []string{"SLURM_CONF=" + nameless}})
	c.Cluster(t.Context())
	first := c.Calls()
	if got := c.Cluster(t.Context()); got != "" || c.Calls() != first {
		t.Errorf("a cluster that did not say its name: %q, asked %d more times within clusterRetry", got, c.Calls()-first)
	}
}

// A job array's script runs, in each task, that task's command in its own
// directory, its setup's output in its own log; a task it has no worker
// for fails.
func TestArrayScriptRunsEachTasksOwn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var jobs []Job
	for _, name := range []string{"a", "b d"} {
		d := filepath.Join(dir, name)
		os.Mkdir(d, 0o700)
		jobs = append(jobs, Job{Dir: d, SetupLog: filepath.Join(d, "setup.log"), Argv: []string{"/bin/sh", "-c", `echo "$1 in $PWD with $TOOL"`, "sh", "task '" + name + "'"}})
	}
	script, err := arrayScript(Job{Setup: "echo setting up; export TOOL=loaded"}, jobs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "batch")
	os.WriteFile(path, []byte(script), 0o700)
	for i, name := range []string{"a", "b d"} {
		cmd := exec.Command("/bin/sh", path)
		cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID="+strconv.Itoa(i))
		out, err := cmd.CombinedOutput()
		want := "task '" + name + "' in " + filepath.Join(dir, name) + " with loaded\n"
		log, _ := os.ReadFile(jobs[i].SetupLog)
		if err != nil || string(out) != want || !strings.Contains(string(log), "setting up") {
			t.Fatalf("task %d: %v, output %q, want %q; setup log %q\n%s", i, err, out, want, log, script)
		}
	}
	cmd := exec.Command("/bin/sh", path)
	cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=7")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "no worker") {
		t.Fatalf("task 7 of 2: %v, %q", err, out)
	}
}

package slurm

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
	for name, want := range map[string]string{"zwarm-0199a213-81c0": "0199a213-81c0", "victim": "", "zwarm": "", "": ""} {
		if got := jobState(State{ID: "51", State: "RUNNING", Name: name}).Session; got != want {
			t.Errorf("job named %q: session %q, want %q", name, got, want)
		}
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

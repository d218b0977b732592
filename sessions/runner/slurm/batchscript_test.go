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

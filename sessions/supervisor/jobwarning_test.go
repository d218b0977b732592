package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/runner/slurm/slurmtest"
)

func TestParseTimeLeft(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0:45", 45 * time.Second, true},
		{"1:00", time.Minute, true},
		{"12:03:04", 12*time.Hour + 3*time.Minute + 4*time.Second, true},
		{"2-01:00:00", 49 * time.Hour, true},
		{"UNLIMITED", 0, false},
		{"NOT_SET", 0, false},
		{"INVALID", 0, false},
		{"", 0, false},
		{"1:2:3:4", 0, false},
		{"x-1:00", 0, false},
	} {
		got, ok := parseTimeLeft(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("parseTimeLeft(%q) = %s, %v; want %s, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// A supervisor that missed Slurm's one warning asks squeue how long its
// job has left; a controller too busy to answer in time (squeue's socket
// timed out, as under the load of many jobs starting) is asked again,
// where one failure had the session run on until the limit killed it.
// The first two questions fail here, in a wrapper of the real squeue; the
// third goes to the test cluster, about a real job of one minute.
func TestTheTimeLeftIsAskedAgainOfABusyController(t *testing.T) {
	for _, kv := range slurmtest.Cluster(t) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	real, err := exec.LookPath("squeue")
	if err != nil {
		t.Fatal(err)
	}
	bin, count := t.TempDir(), filepath.Join(t.TempDir(), "asked")
	wrapper := fmt.Sprintf(`#!/bin/sh
n=$(cat '%s' 2>/dev/null || echo 0)
echo $((n + 1)) > '%s'
if [ "$n" -lt 2 ]; then
	echo "squeue: error: slurm_load_jobs error: Socket timed out on send/recv operation" >&2
	exit 1
fi
exec '%s' "$@"
`, count, count, real)
	if err := os.WriteFile(filepath.Join(bin, "squeue"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sbatch", "--parsable", "--time=1", "--output=/dev/null", "--wrap", "sleep 90").Output()
	if err != nil {
		t.Fatalf("sbatch: %v", err)
	}
	job, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	t.Cleanup(func() { exec.Command("scancel", job).Run() })
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if !missedWarning(context.Background(), job) {
		t.Fatalf("job %s of one minute is not within a minute of its limit", job)
	}
	if b, _ := os.ReadFile(count); strings.TrimSpace(string(b)) != "3" {
		t.Errorf("squeue was asked %q times; want the two that failed and one more", b)
	}
}

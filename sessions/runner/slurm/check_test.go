package slurm_test

import (
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/runner/slurm"
	"github.com/zwarm/zwarm/sessions/runner/slurm/slurmtest"
)

func TestPingAndCheck(t *testing.T) {
	t.Parallel()
	c := client(t, slurm.Options{})
	slurmtest.Undrained(t, slurmtest.Cluster(t)) // check looks for a node that can run a job
	if err := c.Ping(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	lines := c.Check(ctxFor(t))
	text := strings.Join(lines, "\n")
	for _, want := range []string{"ok: sbatch is ", "ok: the controller answers", "ok: node "} {
		if !strings.Contains(text, want) {
			t.Errorf("check lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "problem:") {
		t.Errorf("check of a working cluster finds a problem:\n%s", text)
	}

	bad := client(t, slurm.Options{Partition: "no-such-partition"})
	if text := strings.Join(bad.Check(ctxFor(t)), "\n"); !strings.Contains(text, "problem: partition no-such-partition has no nodes") {
		t.Errorf("check of a missing partition:\n%s", text)
	}
}

// A missing binary is named, with what to install.
func TestMissingBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	c := slurm.New(slurm.Options{})
	err := c.Ping(ctxFor(t))
	if err == nil || !strings.Contains(err.Error(), "sinfo not found on PATH: install Slurm's client tools") {
		t.Fatalf("ping without sinfo: %v", err)
	}
	text := strings.Join(c.Check(ctxFor(t)), "\n")
	if !strings.Contains(text, "problem: sbatch not found on PATH") {
		t.Errorf("check without binaries:\n%s", text)
	}
}

// A node in two partitions is one node: the second cluster's node is in
// batch and long, and check names it once.
func TestCheckCountsANodeOnce(t *testing.T) {
	t.Parallel()
	env := slurmtest.Second(t)
	slurmtest.Undrained(t, env) // its node not lost meanwhile
	c := slurm.New(slurm.Options{Env: env})
	lines := c.Check(ctxFor(t))
	nodes := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "ok: node ") || strings.HasPrefix(l, "problem: node ") {
			nodes++
		}
	}
	if want := len(slurmtest.Nodes(t, env)); nodes != want || want != 1 {
		t.Fatalf("check names %d nodes of a cluster of %d, its node in two partitions:\n%s", nodes, want, strings.Join(lines, "\n"))
	}
}

// Package slurmtest finds the one-node Slurm cluster that .ci/slurm/up
// starts, for tests that need a real one, and drains and resumes its node.
package slurmtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Cluster returns the environment a Slurm client needs to reach the test
// cluster (SLURM_CONF=...). The cluster is the one SLURM_CONF names, else
// the one .ci/slurm/up starts by default (.tools/slurm/slurm.conf under
// the module root). If there is none, or it does not answer, the test is
// skipped with what to run, or fails when ZWARM_SLURM_REQUIRED=1 (as in
// CI, which starts the cluster).
func Cluster(t testing.TB) []string {
	t.Helper()
	probe.Do(func() { probe.env, probe.why = find() })
	if probe.why != "" {
		unavailable(t, probe.why)
	}
	return probe.env
}

// Second returns the environment that reaches the second test cluster,
// which .ci/run starts beside the first as a lab's other cluster
// (ZWARM_SLURM_DIR=.tools/slurm-b ZWARM_SLURM_CLUSTER=zwarmb
// ZWARM_SLURM_PARTITION=batch ZWARM_SLURM_PARTITION2=long .ci/slurm/up
// with ports of its own: its one node in two partitions): the
// one ZWARM_SLURM_CONF_B names, else .tools/slurm-b/slurm.conf. It is
// skipped, or failed under ZWARM_SLURM_REQUIRED=1, as Cluster is.
func Second(t testing.TB) []string {
	t.Helper()
	second.Do(func() {
		conf := os.Getenv("ZWARM_SLURM_CONF_B")
		if conf == "" {
			root, err := moduleRoot()
			if err != nil {
				second.why = err.Error()
				return
			}
			conf = filepath.Join(root, ".tools", "slurm-b", "slurm.conf")
		}
		second.env, second.why = findConf(conf)
	})
	if second.why != "" {
		unavailable(t, "second cluster: "+second.why)
	}
	return second.env
}

var second struct {
	sync.Once
	env []string
	why string
}

// probe is what find concluded, once per test process: asking a cluster
// that is down takes sinfo its whole message timeout (about 10 s), and a
// package's Slurm tests should not each wait it out to learn the same.
var probe struct {
	sync.Once
	env []string
	why string
}

// find locates the cluster and asks it whether it answers; why says what
// is missing when it cannot.
func find() (env []string, why string) {
	conf := os.Getenv("SLURM_CONF")
	if conf == "" {
		root, err := moduleRoot()
		if err != nil {
			return nil, err.Error()
		}
		conf = filepath.Join(root, ".tools", "slurm", "slurm.conf")
	}
	return findConf(conf)
}

// findConf asks the cluster of conf whether it answers.
func findConf(conf string) (env []string, why string) {
	if _, err := os.Stat(conf); err != nil {
		return nil, "no Slurm config at " + conf
	}
	env = []string{"SLURM_CONF=" + conf}
	if _, err := exec.LookPath("sinfo"); err != nil {
		return nil, "sinfo is not on PATH"
	}
	if out, err := command(env, "sinfo", "-h", "-o", "%T"); err != nil {
		return nil, "the cluster of " + conf + " does not answer: " + out
	}
	// A node the controller has not heard from yet (sinfo's trailing '*',
	// as just after the cluster started) cannot run a job: wait for it to
	// register, as a test's job would, rather than fail on the first look.
	var states string
	for deadline := time.Now().Add(time.Minute); ; {
		out, err := command(env, "sinfo", "-h", "-N", "-o", "%T")
		if err == nil && out != "" && !strings.Contains(out, "*") {
			return env, ""
		}
		states = out
		if time.Now().After(deadline) {
			return nil, "a node of " + conf + " does not answer its controller after a minute (sinfo -N says " + strings.Join(strings.Fields(states), ", ") + ")"
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// unavailable skips the test, or fails it when the cluster is required.
func unavailable(t testing.TB, why string) {
	t.Helper()
	msg := "no Slurm test cluster (" + why + "): start one with .ci/slurm/up and export the SLURM_CONF it prints"
	if os.Getenv("ZWARM_SLURM_REQUIRED") == "1" {
		t.Fatal(msg + " (ZWARM_SLURM_REQUIRED=1)")
	}
	t.Skip(msg)
}

// moduleRoot is the nearest directory above the working directory with a
// go.mod: the repository root for every package of the main module.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// command runs a Slurm command with env added, giving it 30 s, and
// returns its combined output.
func command(env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// Nodes lists the cluster's nodes.
func Nodes(t testing.TB, env []string) []string {
	t.Helper()
	out, err := command(env, "sinfo", "-h", "-N", "-o", "%N")
	if err != nil {
		t.Fatalf("sinfo -N: %v: %s", err, out)
	}
	var nodes []string
	seen := map[string]bool{}
	for _, n := range strings.Fields(out) {
		if !seen[n] {
			seen[n] = true
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		t.Fatal("sinfo -N lists no node")
	}
	return nodes
}

// Drain drains every node of the cluster, so new jobs stay pending while
// running ones go on:
//
//	scontrol update nodename=NODE state=drain reason=test
//
// The nodes are resumed when the test ends if the test has not resumed
// them. The cluster is shared by every test that uses it, in every
// package, so a test keeps its nodes drained as briefly as it can.
func Drain(t testing.TB, env []string) {
	t.Helper()
	// Registered first, so it runs last: after the resume below.
	t.Cleanup(lockDrain(t, env, unix.LOCK_EX))
	for _, n := range Nodes(t, env) {
		if out, err := command(env, "scontrol", "update", "nodename="+n, "state=drain", "reason=test"); err != nil {
			t.Fatalf("drain %s: %v: %s", n, err, out)
		}
	}
	t.Cleanup(func() { resume(env) })
}

// Undrained keeps the cluster's nodes from being drained while the test
// runs, waiting first for a test that drained them (in this process or
// another: the packages' tests run at once) to resume them. A test that
// checks the cluster can run a job (sinfo's node states, doctor) calls it.
func Undrained(t testing.TB, env []string) {
	t.Helper()
	t.Cleanup(lockDrain(t, env, unix.LOCK_SH))
}

// lockDrain takes the drain lock, a file beside the cluster's config, in
// mode (LOCK_EX to drain, LOCK_SH to need the nodes undrained), and
// returns its release. It waits as long as a drain may last, and fails
// the test after that.
func lockDrain(t testing.TB, env []string, mode int) func() {
	t.Helper()
	path := filepath.Join(filepath.Dir(confOf(env)), "test-drain.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatalf("the test cluster's drain lock: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		err := unix.Flock(int(f.Fd()), mode|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			t.Fatalf("the test cluster's drain lock %s: %v (another test has held it for 5 minutes)", path, err)
		}
	}
	return func() { f.Close() } // closing lets go of the lock
}

// Resume brings every node back after Drain:
//
//	scontrol update nodename=NODE state=resume
func Resume(t testing.TB, env []string) {
	t.Helper()
	if err := resume(env); err != nil {
		t.Fatal(err)
	}
}

func resume(env []string) error {
	out, err := command(env, "sinfo", "-h", "-N", "-o", "%N|%T")
	if err != nil {
		return errors.New("sinfo -N: " + err.Error() + ": " + out)
	}
	for _, l := range strings.Split(out, "\n") {
		n, state, _ := strings.Cut(strings.TrimSpace(l), "|")
		// Resuming a node that is not drained is an error to scontrol.
		if n == "" || !strings.HasPrefix(state, "drain") {
			continue
		}
		if out, err := command(env, "scontrol", "update", "nodename="+n, "state=resume"); err != nil {
			return errors.New("resume " + n + ": " + err.Error() + ": " + out)
		}
	}
	return nil
}

// LoseNode loses the cluster's node as a machine that dies does: its
// slurmd, recorded by .ci/slurm/up, is killed with SIGKILL (under
// --pidns, every job on it dies with it, its supervisor unable to say a
// word), and the controller is told the node is down (it would find out
// itself only after SlurmdTimeout). back starts the cluster again, as
// it was (.ci/slurm/up on its directory); it runs when the test ends if the
// test has not run it. No other test uses the cluster meanwhile: the test
// holds it as Drain does, and tests that need it whole hold Undrained.
func LoseNode(t testing.TB, env []string) (back func()) {
	t.Helper()
	t.Cleanup(lockDrain(t, env, unix.LOCK_EX))
	dir := filepath.Dir(confOf(env))
	nodes := Nodes(t, env)
	var once sync.Once
	back = func() {
		once.Do(func() {
			root, err := moduleRoot()
			if err != nil {
				t.Error(err)
				return
			}
			cmd := exec.Command(filepath.Join(root, ".ci", "slurm", "up"), "--pidns")
			cmd.Env = append(os.Environ(), "ZWARM_SLURM_DIR="+dir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("starting the cluster of %s again: %v\n%s", dir, err, out)
			}
		})
	}
	t.Cleanup(back)
	b, err := os.ReadFile(filepath.Join(dir, "pids", "slurmd"))
	pid, comm, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	if err != nil || comm != "slurmd" {
		t.Fatalf("the cluster's slurmd is not recorded in %s (%v): it was not started by .ci/slurm/up", dir, err)
	}
	if got, _ := os.ReadFile("/proc/" + pid + "/comm"); strings.TrimSpace(string(got)) != comm {
		t.Fatalf("the cluster's slurmd (pid %s) does not run", pid)
	}
	n, _ := strconv.Atoi(pid)
	if err := unix.Kill(n, unix.SIGKILL); err != nil {
		t.Fatalf("kill slurmd %d: %v", n, err)
	}
	for _, node := range nodes {
		if out, err := command(env, "scontrol", "update", "nodename="+node, "state=down", "reason=lost"); err != nil {
			t.Fatalf("mark %s down: %v: %s", node, err, out)
		}
	}
	return back
}

// StartSoon lets a job the cluster requeued start in two seconds: Slurm
// holds a requeued job back for its first two minutes (BeginTime). Not at
// once: slurmd refuses to launch a job whose credential was made in the
// second its last run's was revoked in ("Killing non-startable batch job:
// Job credential revoked"), and the job fails. Two seconds leave slurmd,
// on a busy machine, the time to revoke the last run's first.
//
//	scontrol update jobid=ID StartTime=now+2
func StartSoon(t testing.TB, env []string, id string) {
	t.Helper()
	out, err := untilNotBusy(env, 30*time.Second, "scontrol", "update", "jobid="+id, "StartTime=now+2")
	switch {
	case err == nil:
	case strings.Contains(out, busyNow):
		// The accounting never indexed the requeued job: the message that
		// would have was lost when the cluster was started again just
		// after the requeue (LoseNode's back). The job starts at its
		// begin time all the same, within two minutes of the requeue.
		t.Logf("job %s starts at its begin time: %s", id, out)
	default:
		t.Fatalf("scontrol update jobid=%s StartTime=now+2: %v: %s", id, err, out)
	}
}

// busyNow is how slurmctld refuses a change to a job it has just queued,
// until the accounting database has given the job its index.
const busyNow = "try again in a bit"

// Run runs a Slurm command against env's cluster and returns what it
// printed, failing t if it fails. A refusal that asks to try again in a
// bit (a job just queued on a cluster with accounting) is tried again,
// as the message asks, for up to 90 s: a cluster just started, on a
// loaded machine, took over 30 s to index a job.
func Run(t testing.TB, env []string, name string, args ...string) string {
	t.Helper()
	out, err := untilNotBusy(env, 90*time.Second, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// untilNotBusy runs a Slurm command, again while slurmctld refuses it as
// busy (busyNow), for up to within.
func untilNotBusy(env []string, within time.Duration, name string, args ...string) (string, error) {
	deadline := time.Now().Add(within)
	for {
		out, err := command(env, name, args...)
		if err == nil || !strings.Contains(out, busyNow) || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// confOf is the SLURM_CONF of env.
func confOf(env []string) string {
	conf := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "SLURM_CONF="); ok {
			conf = v
		}
	}
	return conf
}

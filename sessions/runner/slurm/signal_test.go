package slurm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/runner/slurm"
)

// Signal reaches the batch step's main process, which decides what to do.
func TestSignalTerm(t *testing.T) {
	t.Parallel()
	c := client(t, slurm.Options{})
	id, dir := shJob(t, c, `trap 'echo got TERM > "$D/term"; exit 0' TERM; echo ready > "$D/ready"; while :; do sleep 0.1; done`)
	waitFor(t, c, id, "running", time.Minute, running)
	waitFile(t, filepath.Join(dir, "ready"), time.Minute)
	if err := c.Signal(ctxFor(t), slurm.Ref{ID: id}, "TERM"); err != nil {
		t.Fatal(err)
	}
	if got := waitFile(t, filepath.Join(dir, "term"), time.Minute); got != "got TERM\n" {
		t.Fatalf("term file: %q", got)
	}
	if s := waitFor(t, c, id, "ended", time.Minute, terminal); s.State != "COMPLETED" {
		t.Fatalf("ended %+v after handling TERM and exiting 0", s)
	}
	// The job is gone: signalling it again is no error.
	if err := c.Signal(ctxFor(t), slurm.Ref{ID: id}, "TERM"); err != nil {
		t.Fatalf("signal of an ended job: %v", err)
	}
}

// Kill ends a job that ignores TERM, children and all.
func TestKill(t *testing.T) {
	t.Parallel()
	c := client(t, slurm.Options{})
	id, dir := shJob(t, c, `trap '' TERM; sleep 300 & echo $! > "$D/child"; echo ready > "$D/ready"; while :; do sleep 0.1; done`)
	waitFor(t, c, id, "running", time.Minute, running)
	waitFile(t, filepath.Join(dir, "ready"), time.Minute)
	child := strings.TrimSpace(waitFile(t, filepath.Join(dir, "child"), time.Minute))
	if err := c.Kill(ctxFor(t), slurm.Ref{ID: id}); err != nil {
		t.Fatal(err)
	}
	s := waitFor(t, c, id, "ended", time.Minute, terminal)
	if s.State == "COMPLETED" || s.ExitCode != "0:9" {
		t.Fatalf("killed job ended %+v, want the batch step killed by signal 9", s)
	}
	t.Logf("killed: %+v, why %q", s, s.Why())
	// The child went with it. Its pid is only meaningful where slurmd's
	// pid namespace is ours; when not, the check proves nothing and is
	// harmless.
	if b, err := os.ReadFile("/proc/" + child + "/cmdline"); err == nil && strings.HasPrefix(string(b), "sleep\x00300") {
		t.Errorf("the job's child %s (sleep 300) outlived Kill", child)
	}
	if err := c.Kill(ctxFor(t), slurm.Ref{ID: id}); err != nil {
		t.Fatalf("kill of an ended job: %v", err)
	}
}

// Cancel removes a pending job before it starts, and ends a running one
// CANCELLED; cancelling what is gone (or never was) is no error.
func TestCancel(t *testing.T) {
	t.Parallel()
	c := client(t, slurm.Options{ExtraArgs: []string{"--begin=now+1hour"}})
	pending, _ := shJob(t, c, "echo ran")
	s := waitFor(t, c, pending, "pending", time.Minute, func(s slurm.State) bool { return s.Pending() })
	if err := c.Signal(ctxFor(t), slurm.Ref{ID: pending}, "TERM"); !errors.Is(err, slurm.ErrPending) {
		t.Errorf("signal of a pending job: %v, want ErrPending", err)
	}
	if err := c.Cancel(ctxFor(t), slurm.Ref{ID: pending}); err != nil {
		t.Fatal(err)
	}
	s = waitFor(t, c, pending, "ended", time.Minute, terminal)
	if s.State != "CANCELLED" || s.Why() != "cancelled by slurm" || s.Nodes != "" {
		t.Fatalf("cancelled pending job: %+v, why %q", s, s.Why())
	}

	c2 := client(t, slurm.Options{})
	live, dir := shJob(t, c2, `echo ready > "$D/ready"; while :; do sleep 0.1; done`)
	waitFor(t, c2, live, "running", time.Minute, running)
	waitFile(t, filepath.Join(dir, "ready"), time.Minute)
	if err := c2.Cancel(ctxFor(t), slurm.Ref{ID: live}); err != nil {
		t.Fatal(err)
	}
	s = waitFor(t, c2, live, "ended", time.Minute, terminal)
	if s.State != "CANCELLED" || s.Why() != "cancelled by slurm" {
		t.Fatalf("cancelled running job: %+v, why %q", s, s.Why())
	}
	for _, id := range []string{live, neverID} {
		if err := c2.Cancel(ctxFor(t), slurm.Ref{ID: id}); err != nil {
			t.Errorf("cancel of gone job %s: %v", id, err)
		}
	}
}

// A job is acted on only when it has the name asked for: the same id may
// be another cluster's job, or a later job of this one. A signal, a kill
// and a cancel of a job by its id and another name leave it running; by
// its own name, they reach it.
func TestActsOnlyOnAJobOfItsName(t *testing.T) {
	t.Parallel()
	c := client(t, slurm.Options{})
	id, dir := shJob(t, c, `echo ready > "$D/ready"; while :; do sleep 0.1; done`)
	waitFor(t, c, id, "running", time.Minute, running)
	waitFile(t, filepath.Join(dir, "ready"), time.Minute)
	other := slurm.Ref{ID: id, Name: "zwarm-another-session"}
	if err := c.Signal(ctxFor(t), other, "TERM"); err != nil {
		t.Fatal(err)
	}
	if err := c.Kill(ctxFor(t), other); err != nil {
		t.Fatal(err)
	}
	if err := c.Cancel(ctxFor(t), other); err != nil {
		t.Fatal(err)
	}
	states, err := c.States(ctxFor(t), []string{id})
	name := "zwarm-test-" + t.Name()
	if err != nil || states[id].State != "RUNNING" || states[id].Name != name {
		t.Fatalf("the job after a signal, a kill and a cancel under another name: %+v %v; want it RUNNING, named %s", states[id], err, name)
	}
	if err := c.Cancel(ctxFor(t), slurm.Ref{ID: id, Name: name}); err != nil {
		t.Fatal(err)
	}
	if s := waitFor(t, c, id, "ended", time.Minute, terminal); s.State != "CANCELLED" {
		t.Fatalf("cancelled by its own name, it ended %+v", s)
	}
}

// A task of an array still pending is killed or cancelled alone: its
// siblings, in the same pending record until they start, stay queued (a
// name filter or a signal would have scancel take the record whole).
func TestKillOfOnePendingArrayTaskLeavesItsSiblings(t *testing.T) {
	t.Parallel()
	c := client(t, slurm.Options{ExtraArgs: []string{"--begin=now+1hour"}})
	dir := t.TempDir()
	name := "zwarm-test-" + t.Name()
	array := slurm.Job{Name: name, Dir: dir, Output: filepath.Join(dir, "out-%A_%a")}
	var jobs []slurm.Job
	for range 3 {
		jobs = append(jobs, slurm.Job{Dir: dir, Argv: []string{"sh", "-c", "echo ran"}})
	}
	ids, err := c.SubmitArray(ctxFor(t), array, jobs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, id := range ids {
			c.Cancel(context.Background(), slurm.Ref{ID: id})
		}
	})
	for _, id := range ids {
		waitFor(t, c, id, "pending", time.Minute, func(s slurm.State) bool { return s.Pending() })
	}
	// A kill (zwarm kill's forced stop) of a pending task is its cancel.
	if err := c.Kill(ctxFor(t), slurm.Ref{ID: ids[1], Name: name}); err != nil {
		t.Fatal(err)
	}
	// A cancelled pending task leaves the queue at once, or shows as
	// CANCELLED a while.
	deadline := time.Now().Add(time.Minute)
	for {
		states, err := c.States(ctxFor(t), []string{ids[1]})
		if s, known := states[ids[1]]; err == nil && (!known || s.State == "CANCELLED") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s not cancelled after a minute: %+v %v", ids[1], states[ids[1]], err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	states, err := c.States(ctxFor(t), []string{ids[0], ids[2]})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{ids[0], ids[2]} {
		if s, ok := states[id]; !ok || !s.Pending() {
			t.Errorf("sibling %s after the cancel of %s: %+v (known %t), want it still pending", id, ids[1], s, ok)
		}
	}
	// Another name's cancel of a task leaves it queued; so does the
	// cancel of its sibling by its own name.
	if err := c.Cancel(ctxFor(t), slurm.Ref{ID: ids[0], Name: "zwarm-another-session"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Cancel(ctxFor(t), slurm.Ref{ID: ids[2], Name: name}); err != nil {
		t.Fatal(err)
	}
	if states, err := c.States(ctxFor(t), []string{ids[0]}); err != nil || !states[ids[0]].Pending() {
		t.Fatalf("a task after a cancel under another name: %+v %v", states[ids[0]], err)
	}
}

package slurm_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/runner/slurm"
	"github.com/zwarm/zwarm/sessions/runner/slurm/slurmtest"
)

// neverID is above Slurm's largest job id (MaxJobId), so no cluster ever
// knew it.
const neverID = "99999999"

// One squeue call answers for a live, a finished and an unknown job; the
// unknown one is absent. Unknown ids alone (squeue then refuses the whole
// call) give an empty answer, not an error.
func TestStatesMixed(t *testing.T) {
	t.Parallel()
	c := client(t, slurm.Options{})
	done, _ := shJob(t, c, "true")
	waitFor(t, c, done, "ended", time.Minute, terminal)
	live, liveDir := shJob(t, c, waitGo)
	waitFor(t, c, live, "running", time.Minute, running)

	before := c.Calls()
	states, err := c.States(ctxFor(t), []string{live, done, neverID})
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Calls() - before; n != 1 {
		t.Errorf("%d Slurm commands for one States call, want 1", n)
	}
	if s := states[live]; s.ID != live || !s.Running() || s.State != "RUNNING" {
		t.Errorf("live job: %+v", s)
	}
	if s := states[done]; s.State != "COMPLETED" || !s.Terminal() {
		t.Errorf("finished job: %+v", s)
	}
	if s, ok := states[neverID]; ok {
		t.Errorf("unknown job has a state: %+v", s)
	}
	if len(states) != 2 {
		t.Errorf("states: %+v", states)
	}

	// squeue refuses one unknown id with "Invalid job id specified".
	for _, ids := range [][]string{{neverID}, {neverID, "99999998"}} {
		states, err = c.States(ctxFor(t), ids)
		if err != nil {
			t.Fatalf("unknown ids %v alone: %v", ids, err)
		}
		if len(states) != 0 {
			t.Fatalf("unknown ids %v alone: %+v", ids, states)
		}
	}
	states, err = c.States(ctxFor(t), []string{done})
	if err != nil || states[done].State != "COMPLETED" || len(states) != 1 {
		t.Fatalf("one finished job alone: %+v, %v", states, err)
	}
	release(t, liveDir)
}

// States refuses what is not a job id before asking squeue.
func TestStatesBadID(t *testing.T) {
	t.Parallel()
	c := slurm.New(slurm.Options{})
	if _, err := c.States(ctxFor(t), []string{"12,13"}); err == nil {
		t.Fatal("took \"12,13\" for a job id")
	}
	if c.Calls() != 0 {
		t.Fatal("squeue ran for a bad id")
	}
}

// Fifty jobs are polled with one squeue call each time, until all ended.
func TestStatesManyJobsOneCall(t *testing.T) {
	t.Parallel()
	c := client(t, slurm.Options{})
	var ids []string
	for i := 0; i < 50; i++ {
		id, _ := shJob(t, c, fmt.Sprintf("sleep 1; echo %d", i))
		ids = append(ids, id)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for polls := 1; ; polls++ {
		before := c.Calls()
		states, err := c.States(ctxFor(t), ids)
		if err != nil {
			t.Fatal(err)
		}
		if n := c.Calls() - before; n != 1 {
			t.Fatalf("poll %d of %d jobs ran %d Slurm commands, want 1", polls, len(ids), n)
		}
		if len(states) != len(ids) {
			t.Fatalf("poll %d: %d states for %d jobs", polls, len(states), len(ids))
		}
		ended := 0
		for _, s := range states {
			if s.Terminal() {
				if s.State != "COMPLETED" {
					t.Fatalf("job %s ended %+v", s.ID, s)
				}
				ended++
			}
		}
		if ended == len(ids) {
			t.Logf("%d jobs ended after %d polls", len(ids), polls)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs ended after 3 minutes", ended, len(ids))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// A job held by a drained node is PENDING with a reason, then runs once
// the node is back.
func TestPendingWhileDrained(t *testing.T) {
	// Not parallel: draining holds every test's new jobs.
	c := client(t, slurm.Options{})
	env := slurmtest.Cluster(t)
	slurmtest.Drain(t, env)
	id, dir := shJob(t, c, waitGo)
	s := waitFor(t, c, id, "pending with a reason", time.Minute, func(s slurm.State) bool {
		return s.State == "PENDING" && s.Reason != "" && s.Reason != "None"
	})
	if !s.Pending() || s.Running() || s.Terminal() || s.Nodes != "" {
		t.Errorf("pending job: %+v", s)
	}
	t.Logf("pending: %s", s.Reason)
	slurmtest.Resume(t, env)
	waitFor(t, c, id, "running", time.Minute, running)
	release(t, dir)
	if s := waitFor(t, c, id, "ended", time.Minute, terminal); s.State != "COMPLETED" {
		t.Fatalf("ended %+v", s)
	}
}

// A job past its time limit ends TIMEOUT, and Why says the limit. Slurm's
// smallest limit is a minute and its controller looks for jobs over their
// limit every 30 s, so this test takes one to two minutes.
func TestTimeLimit(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("takes a minute or two (-short)")
	}
	c := client(t, slurm.Options{Time: "1"})
	// USR1 is the warning of the limit (sbatch --signal): taken, not fatal.
	id, _ := shJob(t, c, `trap 'echo warned' USR1; while :; do sleep 1; done`)
	s := waitFor(t, c, id, "timed out", 4*time.Minute, terminal)
	if s.State != "TIMEOUT" || s.Why() != "time limit 00:01:00" {
		t.Fatalf("ended %+v, why %q; want TIMEOUT, time limit 00:01:00", s, s.Why())
	}
}

// A controller that does not answer is ErrUnreachable, for every call.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	env := slurmtest.Cluster(t)
	conf := strings.TrimPrefix(env[0], "SLURM_CONF=")
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	// The same cluster, but on a port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	bad := regexp.MustCompile(`(?m)^SlurmctldPort=.*$`).ReplaceAll(b, []byte(fmt.Sprintf("SlurmctldPort=%d", port)))
	badConf := filepath.Join(t.TempDir(), "slurm.conf")
	if err := os.WriteFile(badConf, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	c := slurm.New(slurm.Options{Env: []string{"SLURM_CONF=" + badConf}})
	dir := t.TempDir()
	calls := map[string]func() error{
		"States": func() error { _, err := c.States(ctxFor(t), []string{"1"}); return err },
		"Ping":   func() error { return c.Ping(ctxFor(t)) },
		"Submit": func() error {
			_, err := c.Submit(ctxFor(t), slurm.Job{Name: "zwarm-test-x", Dir: dir, Output: dir + "/out", Argv: []string{"true"}})
			return err
		},
		"Cancel": func() error { return c.Cancel(ctxFor(t), slurm.Ref{ID: "1"}) },
		"Check": func() error {
			lines := strings.Join(c.Check(ctxFor(t)), "\n")
			if !strings.Contains(lines, "problem: the controller does not answer") {
				return errors.New("check says:\n" + lines)
			}
			return fmt.Errorf("%w (check said so)", slurm.ErrUnreachable)
		},
	}
	errs := make(chan string, len(calls))
	for name, call := range calls {
		go func() {
			err := call()
			if !errors.Is(err, slurm.ErrUnreachable) {
				errs <- fmt.Sprintf("%s: %v, want ErrUnreachable", name, err)
				return
			}
			errs <- ""
		}()
	}
	for range calls {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// A session whose supervisor died and whose directory was deleted: doctor
// lists its processes, kill --orphans stops them.
func TestKillOrphans(t *testing.T) {
	if how, err := proc.Containment(); !strings.HasPrefix(how, "cgroup") {
		t.Skipf("cgroup containment is not available here (%v)", err)
	}
	w := newWorld(t)
	if r := w.zwarm("kill", "--orphans", "3f2a"); r.code != 2 {
		t.Fatalf("kill --orphans with an id: %+v", r)
	}
	if r := w.zwarm("kill", "--orphans"); r.code != 0 || !strings.Contains(r.stderr, "no orphaned processes") {
		t.Fatalf("kill --orphans with none: %+v", r)
	}
	dir := t.TempDir()
	w.setScript(grandchildren(dir, true))
	id := w.spawn("run forever")
	escaped := readPID(t, filepath.Join(dir, "escaped.pid"))
	defer syscall.Kill(escaped, syscall.SIGKILL)
	// The owner first recorded is the spawning command: the supervisor
	// claims the session after.
	var rec record.Session
	sessionstest.Eventually(t, "the supervisor to own the session, its agent started", func() bool {
		rec = w.record(id)
		return rec.Owner != nil && rec.Owner.Role == "supervisor" && rec.Agent != nil
	})
	// The whole tree killed outright (the OOM killer): the supervisor
	// stopped first so that it cannot sweep, the agent's guard killed,
	// then the supervisor. The escaped process is left.
	sessionstest.Stop(t, rec.Owner.PID)
	syscall.Kill(rec.Agent.PID, syscall.SIGKILL)
	sessionstest.Eventually(t, "the guard to die", func() bool { return !sessionstest.Alive(rec.Agent.PID) })
	syscall.Kill(rec.Owner.PID, syscall.SIGKILL)
	sessionstest.Eventually(t, "the supervisor to die", func() bool { return !sessionstest.Alive(rec.Owner.PID) })
	if err := os.RemoveAll(filepath.Join(w.State, "sessions", id)); err != nil {
		t.Fatal(err)
	}
	// doctor asks the agent binary (the fake agent here) for its version:
	// it must not start the script's processes again.
	w.setScript(fakeagent.Completes("done", 700))
	if r := w.zwarm("doctor"); r.code != 1 || !strings.Contains(r.stdout, "orphans") || !strings.Contains(r.stdout, record.ShortID(id)) {
		t.Fatalf("doctor does not list the orphan: %+v", r)
	}
	if out := w.ok("kill", "--orphans"); !strings.Contains(out, record.ShortID(id)) || !strings.Contains(out, "killed pid") {
		t.Fatalf("kill --orphans printed %q", out)
	}
	if sessionstest.Alive(escaped) {
		t.Fatalf("the escaper (pid %d) survived kill --orphans", escaped)
	}
}

// A supervisor killed outright takes every process of its agent with it,
// at once: what the agent started apart (setsid) ran on, unsupervised,
// until a later zwarm command came upon the dead supervisor.
func TestASupervisorKilledOutrightLeavesNoAgentProcess(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	dir := t.TempDir()
	w.setScript(grandchildren(dir, false))
	id := w.spawn("run forever")
	child, escaped := readPID(t, filepath.Join(dir, "child.pid")), readPID(t, filepath.Join(dir, "escaped.pid"))
	defer syscall.Kill(child, syscall.SIGKILL)
	defer syscall.Kill(escaped, syscall.SIGKILL)
	var rec record.Session
	sessionstest.Eventually(t, "the supervisor to own the session", func() bool {
		rec = w.record(id)
		return rec.Owner != nil && rec.Owner.Role == "supervisor"
	})
	killed := time.Now()
	syscall.Kill(rec.Owner.PID, syscall.SIGKILL)
	// No zwarm command runs meanwhile.
	sessionstest.Eventually(t, "the agent's processes to die with their supervisor", func() bool {
		return !sessionstest.Alive(child) && !sessionstest.Alive(escaped)
	})
	time.Sleep(2 * time.Second) // before a reader comes upon it
	s := w.show(id)
	if s.Status() != record.StatusFailed {
		t.Fatalf("after its supervisor was killed: %s (%s)", s.Status(), s.Error)
	}
	// Its end is when its supervisor died, as the guard heard it, not
	// when the reader came upon it.
	if s.EndedAt == nil || s.EndedAt.Sub(killed) > time.Second || s.EndedAt.Before(killed.Add(-time.Second)) {
		t.Fatalf("killed at %s, recorded as ended at %v", killed.UTC().Format(time.RFC3339Nano), s.EndedAt)
	}
}

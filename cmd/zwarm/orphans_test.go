package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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
	rec := w.record(id)
	if rec.Owner == nil {
		t.Fatal("no supervisor recorded")
	}
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

package sessions_test

import (
	"context"
	"errors"
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

// runningEscaper spawns a session whose agent ignores SIGTERM and starts
// an escaper that leaves its session and drops the marker, and returns
// the session, its supervisor and the escaper's pid.
func runningEscaper(t *testing.T, w *world, dir string) (*record.Session, *proc.Ref, int) {
	t.Helper()
	pids := filepath.Join(dir, "escaper.pid")
	w.SetScript(fakeagent.Script{Default: []map[string]any{
		{"ignore_sigterm": true},
		fakeagent.Out(`{"type":"thread.started","thread_id":"t"}`),
		{"spawn": "env -u " + proc.MarkerEnv + " setsid sh -c 'sleep 300 & echo $! > " + pids + "' &", "setsid": true},
		{"wait_file": filepath.Join(dir, "never")},
	}})
	s := w.spawn("outlive your record")
	escaper := readPIDFile(t, pids)
	var sup *proc.Ref
	// Until the agent's thread is recorded, the supervisor still writes the
	// record: a test that removes it before then could see it written back.
	sessionstest.Eventually(t, "the supervisor to run the agent and record its thread", func() bool {
		g, _ := w.Manager.Get(context.Background(), s.ID)
		if g == nil {
			return false
		}
		sup = g.Owner
		return sup != nil && sup.Role == record.RoleSupervisor && g.Agent != nil && g.ThreadID != ""
	})
	return s, sup, escaper
}

// The session's directory deleted while it runs: its supervisor notices,
// stops the agent and everything it started, and exits.
func TestSessionDirRemovedWhileItRuns(t *testing.T) {
	t.Parallel()
	if how, err := proc.Containment(); !strings.HasPrefix(how, "cgroup") {
		t.Skipf("cgroup containment is not available here (%v): zwarm doctor says the same", err)
	}
	w := newWorld(t)
	s, sup, escaper := runningEscaper(t, w, t.TempDir())
	cg := w.Store.SessionCgroup(s.ID)
	// The supervisor may be writing the record (a new file renamed into
	// place) while the directory goes, and then the removal meets an entry
	// made after it listed the directory ("directory not empty"), as rm -rf
	// would: it is tried again, as a person would.
	var removeErr error
	sessionstest.Eventually(t, "the session's directory to be removed", func() bool {
		removeErr = os.RemoveAll(w.Store.SessionDir(s.ID))
		return removeErr == nil || !errors.Is(removeErr, syscall.ENOTEMPTY)
	})
	if removeErr != nil {
		t.Fatal(removeErr)
	}
	sessionstest.Eventually(t, "the supervisor to stop the session", func() bool { return !sup.Alive() })
	if sessionstest.Alive(escaper) {
		syscall.Kill(escaper, syscall.SIGKILL)
		t.Fatalf("the escaper (pid %d) outlived its supervisor", escaper)
	}
	if _, err := os.Stat(cg); cg != "" && !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the session's cgroup %s is left (%v)", cg, err)
	}
}

// A session whose supervisor died and whose directory was then deleted:
// Orphans lists what is left in its cgroup, KillOrphans stops it.
func TestKillOrphans(t *testing.T) {
	if how, err := proc.Containment(); !strings.HasPrefix(how, "cgroup") {
		t.Skipf("cgroup containment is not available here (%v): zwarm doctor says the same", err)
	}
	w := newWorld(t)
	s, sup, escaper := runningEscaper(t, w, t.TempDir())
	defer syscall.Kill(escaper, syscall.SIGKILL)
	cg := w.Store.SessionCgroup(s.ID)
	// The orphan of another state dir is not this one's to kill.
	other := newWorld(t)
	o, otherSup, otherEscaper := runningEscaper(t, other, t.TempDir())
	defer syscall.Kill(otherEscaper, syscall.SIGKILL)

	for _, x := range []struct {
		w   *world
		id  string
		sup *proc.Ref
	}{{w, s.ID, sup}, {other, o.ID, otherSup}} {
		x.sup.Signal(syscall.SIGKILL)
		sessionstest.Eventually(t, "the supervisor to die", func() bool { return !x.sup.Alive() })
		if err := os.RemoveAll(x.w.Store.SessionDir(x.id)); err != nil {
			t.Fatal(err)
		}
	}
	list, err := w.Manager.Orphans()
	if err != nil || len(list) != 1 || list[0].ID != s.ID || list[0].Cgroup != cg {
		t.Fatalf("orphans %+v, %v; want session %s", list, err, record.ShortID(s.ID))
	}
	found := false
	for _, pid := range list[0].PIDs {
		found = found || pid == escaper
	}
	if !found {
		t.Fatalf("the orphan's pids %v lack the escaper %d", list[0].PIDs, escaper)
	}
	if _, err := w.Manager.KillOrphans(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sessionstest.Alive(escaper) {
		t.Fatalf("the escaper (pid %d) survived kill --orphans", escaper)
	}
	if _, err := os.Stat(cg); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the orphan's cgroup %s is left (%v)", cg, err)
	}
	if list, _ := w.Manager.Orphans(); len(list) != 0 {
		t.Fatalf("orphans after the kill: %+v", list)
	}
	if !sessionstest.Alive(otherEscaper) {
		t.Fatalf("kill --orphans stopped a session of another state dir (%s)", record.ShortID(o.ID))
	}
	if list, err := other.Manager.KillOrphans(context.Background()); err != nil || len(list) != 1 || list[0].ID != o.ID || sessionstest.Alive(otherEscaper) {
		t.Fatalf("kill --orphans in the other state dir: %+v, %v (escaper alive: %v)", list, err, sessionstest.Alive(otherEscaper))
	}
}

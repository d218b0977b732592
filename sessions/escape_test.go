package sessions_test

import (
	"context"
	"errors"
	"fmt"
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

// escaperInto is a command for the fake agent that escapes the way a
// hostile agent would: without the marker variable (env -i), immune to
// SIGHUP (nohup), in a session of its own (setsid), and out of its cgroup
// leaf: into a cgroup it makes below the leaf ("sub") or into the
// session's cgroup itself ("session"). It writes its pid to pidfile once
// it has moved.
func escaperInto(t testing.TB, where, pidfile string) string {
	t.Helper()
	mount, root, err := proc.Cgroup2Mount()
	if err != nil {
		t.Fatal(err)
	}
	move := `mkdir "$cg/hide" && echo $$ > "$cg/hide/cgroup.procs"`
	if where == "session" {
		move = `echo $$ > "$(dirname "$cg")/cgroup.procs"`
	}
	inner := fmt.Sprintf(`cg=%s$(sed -n "s|^0::%s||p" /proc/self/cgroup); %s || exit 1; echo $$ > %s.tmp && mv %s.tmp %s; exec sleep 300`,
		mount, strings.TrimSuffix(root, "/"), move, pidfile, pidfile, pidfile)
	return "env -i nohup setsid /bin/sh -c '" + inner + "' >/dev/null 2>&1 &"
}

// escapeSupervisorKill runs one session whose agent starts an escaper
// hiding in a cgroup below the session's (where), SIGKILLs the supervisor,
// lets a reader notice, and reports whether the escaper survived.
func escapeSupervisorKill(t testing.TB, w *world, dir, where string, try int) (survived bool, err error) {
	pidfile := filepath.Join(dir, fmt.Sprintf("escaper-%s-%d.pid", where, try))
	w.SetScript(fakeagent.Script{Default: []map[string]any{
		fakeagent.Out(`{"type":"thread.started","thread_id":"t1"}`),
		{"spawn": escaperInto(t, where, pidfile)},
		{"wait_file": filepath.Join(dir, "never")},
	}})
	s := w.spawn("escape")
	escaper := readPIDFile(t, pidfile)
	var sup *proc.Ref
	sessionstest.Eventually(t, "the supervisor to own the session", func() bool {
		g, _ := w.Manager.Get(context.Background(), s.ID)
		sup = g.Owner
		return sup != nil && sup.Role == record.RoleSupervisor && g.Agent != nil
	})
	cg := w.Store.SessionCgroup(s.ID)
	syscall.Kill(sup.PID, syscall.SIGKILL)
	sessionstest.Eventually(t, "a reader to notice the dead supervisor", func() bool {
		g, err := w.Manager.Get(context.Background(), s.ID)
		return err == nil && g.Settled()
	})
	if sessionstest.Alive(escaper) {
		syscall.Kill(escaper, syscall.SIGKILL)
		return true, fmt.Errorf("the escaper (pid %d, hiding in the %s cgroup) survived its supervisor", escaper, where)
	}
	if cg != "" {
		if _, err := os.Stat(cg); !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("the session's cgroup %s is left behind (%v)", cg, err)
		}
	}
	return false, nil
}

// A supervisor SIGKILLed while its agent's escaper hides in a cgroup of
// its own below the agent's leaf, or in the session's cgroup: the reader
// that notices the dead supervisor stops it, and removes every cgroup the
// session had.
func TestEscaperInASubCgroupOutlivesNoSupervisor(t *testing.T) {
	t.Parallel()
	if how, err := proc.Containment(); !strings.HasPrefix(how, "cgroup") {
		t.Skipf("cgroup containment is not available here (%v): zwarm doctor says the same", err)
	}
	w := newWorld(t)
	dir := t.TempDir()
	for i, where := range []string{"sub", "session"} {
		if _, err := escapeSupervisorKill(t, w, dir, where, i); err != nil {
			t.Fatal(err)
		}
	}
}

package sessions_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// An orchestrated run's cgroup whose run dir is gone (the run killed
// outright, then its state dir's runs/ cleaned) is an orphan of the state
// dir it is tagged with, as a session's is: kill --orphans stops what is
// left in it. A run whose dir is still there is its own to sweep.
func TestKillOrphansOfARun(t *testing.T) {
	if how, err := proc.Containment(); !strings.HasPrefix(how, "cgroup") {
		t.Skipf("cgroup containment is not available here (%v): zwarm doctor says the same", err)
	}
	w := newWorld(t)
	start := func(stateDir string) (string, int) {
		t.Helper()
		id := uuid.NewString()
		g, err := proc.MakeGroup("run-" + id)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			g.Close(ctx)
		})
		if err := g.Tag(stateDir); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go cmd.Wait()
		if err := os.WriteFile(filepath.Join(g.Dir(), "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
		return id, cmd.Process.Pid
	}
	gone, orphan := start(w.Store.Dir())
	kept, live := start(w.Store.Dir())
	if err := os.MkdirAll(filepath.Join(w.Store.Dir(), "runs", kept), 0o700); err != nil {
		t.Fatal(err)
	}
	_, stranger := start(t.TempDir())

	list, err := w.Manager.Orphans()
	if err != nil || len(list) != 1 || !list[0].Run || list[0].ID != gone || list[0].What() != "run "+record.ShortID(gone) {
		t.Fatalf("orphans %+v, %v; want run %s alone", list, err, record.ShortID(gone))
	}
	if _, err := w.Manager.KillOrphans(context.Background()); err != nil {
		t.Fatal(err)
	}
	sessionstest.Eventually(t, "the orphaned run's process to die", func() bool { return !sessionstest.Alive(orphan) })
	if !sessionstest.Alive(live) || !sessionstest.Alive(stranger) {
		t.Fatalf("kill --orphans stopped a run it does not own (live %v, other state dir %v)", sessionstest.Alive(live), sessionstest.Alive(stranger))
	}
}

package sessions_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
)

// A session's cgroup file can be written by anyone who can write the state
// dir. A cgroup it names is killed as the session's only if a supervisor
// of that session made it: zwarm-<id>, tagged with this state dir. Else a
// planted record would have `zwarm kill` (or a listing that finds the
// supervisor dead) kill whatever runs in any cgroup, a system service's.
func TestACgroupARecordNamesIsKilledOnlyIfZwarmMadeIt(t *testing.T) {
	t.Parallel()
	needCgroup(t)
	w := newWorld(t)
	s := w.wait(w.spawn("first").ID)
	parent, err := proc.OwnCgroupDir()
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	for _, c := range []struct {
		what, name, tag string
	}{
		{"a cgroup of another name", "victim-" + s.ID, w.Store.Dir()},
		{"a zwarm-named cgroup zwarm did not tag", "zwarm-" + s.ID, ""},
		{"a cgroup of another state dir", "zwarm-" + s.ID, other},
	} {
		t.Run(c.what, func(t *testing.T) {
			dir := filepath.Join(parent, c.name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.tag != "" {
				if err := unix.Setxattr(dir, proc.StateXattr, []byte(c.tag), 0); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("sleep", "300")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid := cmd.Process.Pid
			reaped := make(chan struct{})
			go func() { cmd.Wait(); close(reaped) }()
			t.Cleanup(func() {
				cmd.Process.Kill()
				// Reaped, it has left the cgroup, which can then be removed.
				select {
				case <-reaped:
				case <-time.After(time.Minute):
				}
				os.Remove(dir)
			})
			if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(w.Store.CgroupFile(s.ID), []byte(dir+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Manager.Kill(context.Background(), s.ID); !errors.Is(err, sessions.ErrNotRunning) {
				t.Errorf("kill: %v, want not running", err)
			}
			if _, err := w.Manager.List(context.Background(), listing.Options{}); err != nil {
				t.Errorf("list: %v", err)
			}
			time.Sleep(100 * time.Millisecond)
			if !sessionstest.Alive(pid) {
				t.Fatalf("%s named by a record was killed", c.what)
			}
		})
	}
}

// Nor is a process a record names as the session's supervisor signalled
// unless its command line says it is that supervisor: pid and start time
// can be read off any process.
func TestARecordedSupervisorIsSignalledOnlyIfItIsOne(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.wait(w.spawn("first").ID)
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	go cmd.Wait()
	t.Cleanup(func() { cmd.Process.Kill() })
	victim, err := proc.RefOf(pid)
	if err != nil {
		t.Fatal(err)
	}
	victim.Role = record.RoleSupervisor
	if _, err := w.Store.Update(s.ID, func(tx *state.Tx) error {
		s := tx.Session()
		statusfield.Set(s, record.StatusRunning)
		s.Owner, s.EndedAt = victim, nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Manager.Kill(context.Background(), s.ID); err != nil {
		t.Logf("kill: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	if !sessionstest.Alive(pid) {
		t.Fatal("a process the record named as its supervisor was killed")
	}
}

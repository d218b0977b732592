//go:build stress

package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// A kill while the session's lock is held past lock_timeout, alternately
// by a process that is not zwarm's and by a stopped process that looks
// like the session's supervisor. Right: nothing of the session is alive
// after the kill returns; with the supervisor-like holder the kill is
// recorded (killed, saying why it forced); with the other the error says
// what was stopped and that the kill is not recorded, never "nothing was
// changed".
func TestStressKillUnderAHeldLock(t *testing.T) {
	n := stressN(t, 40)
	w := newWorld(t)
	w.SetScript(fakeagent.Script{Default: []map[string]any{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		{"spawn": "sleep 300", "setsid": true},
		{"wait_file": filepath.Join(t.TempDir(), "never")},
	}})
	var wrong []string
	for i := range n {
		bad := func(format string, a ...any) {
			wrong = append(wrong, fmt.Sprintf("try %d: ", i)+fmt.Sprintf(format, a...))
		}
		w.WriteConfig("kill_grace = \"300ms\"\n")
		s := w.spawn("run")
		sessionstest.Eventually(t, "the turn to run", func() bool { g, _ := w.Manager.Get(context.Background(), s.ID); return g.ThreadID != "" })
		supervisorLike := i%2 == 1
		args := []string{"hold-lock"}
		if supervisorLike {
			args = []string{"__supervise", s.ID}
		}
		holder := exec.Command(os.Args[0], args...)
		holder.Env = append(os.Environ(), lockHolderEnv+"="+w.Store.LockPath(s.ID), helperEnv+"=")
		if err := holder.Start(); err != nil {
			t.Fatal(err)
		}
		sessionstest.Eventually(t, "the holder to hold the lock", func() bool {
			// Held, and by the holder, as a waiter is told (whatever the
			// lock scheme): the session's supervisor holds it for a moment
			// now and then, and a holder stopped before it took the lock
			// would take it after the kill's first update.
			ctx := store.WithLockPolicy(context.Background(), store.LockPolicy{Timeout: 10 * time.Millisecond})
			l, err := state.LockFileCtx(ctx, w.Store.Dir(), w.Store.LockPath(s.ID))
			if err == nil {
				l.Unlock()
			}
			var te *state.LockTimeoutError
			return errors.As(err, &te) && te.Holder.PID == holder.Process.Pid
		})
		if supervisorLike {
			sessionstest.Stop(t, holder.Process.Pid)
		}
		w.WriteConfig("kill_grace = \"300ms\"\nlock_timeout = \"300ms\"\n")
		got, err := w.Manager.Kill(context.Background(), s.ID)
		if left := w.Manager.Containment(s.ID).Procs(); len(left) > 0 {
			bad("processes alive after the kill returned: %v", left)
		}
		switch {
		case supervisorLike && err != nil:
			bad("kill: %v", err)
		case supervisorLike && (got.Status() != record.StatusKilled || !strings.Contains(got.Error, "its lock was held by")):
			bad("recorded %s: %s", got.Status(), got.Error)
		case !supervisorLike && (!errors.Is(err, state.ErrLockTimeout) || !strings.Contains(err.Error(), "stopped its supervisor") ||
			strings.Contains(err.Error(), "nothing was changed")):
			bad("kill under a foreign lock: %v", err)
		}
		holder.Process.Kill()
		holder.Wait()
		if final := w.wait(s.ID); final.TurnRunning() || !final.Settled() {
			bad("left %s", final.Status())
		}
	}
	t.Logf("%d tries, %d wrong", n, len(wrong))
	for _, s := range wrong {
		t.Error(s)
	}
}

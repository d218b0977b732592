package sessions_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/state"
)

// killUnderLock is a session whose lock another process holds, and a
// manager that counts what a kill says while it waits and forces.
type killUnderLock struct {
	w      *world
	s      *record.Session
	mu     sync.Mutex
	heard  int      // "waiting for session ...": one per lock wait
	warned []string // "stopping its supervisor by force" among them
}

func newKillUnderLock(t *testing.T, running bool) *killUnderLock {
	k := &killUnderLock{w: newWorld(t)}
	if running {
		k.w.SetScript(fakeagent.Script{Default: []map[string]any{fakeagent.Out(`{"type":"thread.started","thread_id":"t"}`), {"wait_file": filepath.Join(t.TempDir(), "never")}}})
		id := k.w.spawn("hold").ID
		// The record itself, not Get (which folds in what the supervisor
		// has not recorded yet): the supervisor has nothing more to write
		// until the kill, so the record a test reads stays as it is.
		sessionstest.Eventually(t, "the agent's first line in the record", func() bool {
			var rec record.Session
			b, _ := os.ReadFile(k.w.Store.MetaPath(id))
			return json.Unmarshal(b, &rec) == nil && rec.ThreadID != ""
		})
		k.s, _ = k.w.Manager.Get(context.Background(), id)
	} else {
		k.s = k.w.wait(k.w.spawn("first").ID)
	}
	// A notice comes after a second of waiting: with a lock_timeout of
	// 5 s, each wait gives exactly one, and a waiter stalled for up to 4 s
	// as the notice comes due does not find its deadline due too.
	k.w.WriteConfig("kill_grace = \"300ms\"\nlock_timeout = \"5s\"\n")
	k.w.Manager.SetLockWaiting(func(state.LockWait) { k.mu.Lock(); k.heard++; k.mu.Unlock() })
	k.w.Manager.SetWarn(func(err error) { k.mu.Lock(); k.warned = append(k.warned, err.Error()); k.mu.Unlock() })
	return k
}

type killResult struct {
	s   *record.Session
	err error
}

func (k *killUnderLock) kill(t *testing.T, ctx context.Context, reason string) killResult {
	t.Helper()
	return within(t, "kill", func() killResult {
		s, err := k.w.Manager.KillBecause(ctx, k.s.ID, reason)
		return killResult{s, err}
	})
}

// A kill of a running session whose lock another process (not zwarm)
// holds past lock_timeout waits for it once, then stops the supervisor and
// every process of the session by force and says so: never "nothing was
// changed" after it signalled something.
func TestKillUnderAForeignLockStopsTheSessionAndSaysSo(t *testing.T) {
	t.Parallel()
	k := newKillUnderLock(t, true)
	w, s := k.w, k.s
	if s.Owner == nil || s.Owner.Role != record.RoleSupervisor || !s.Owner.Alive() {
		t.Fatalf("owner %+v", s.Owner)
	}
	sup := *s.Owner
	agent := w.Manager.Containment(s.ID).Procs()
	if len(agent) == 0 {
		t.Fatal("no agent running")
	}
	holdLock(t, w.Store.LockPath(s.ID))
	r := k.kill(t, context.Background(), "")
	if !errors.Is(r.err, state.ErrLockTimeout) {
		t.Fatalf("kill under a held lock: %v", r.err)
	}
	msg := r.err.Error()
	if strings.Contains(msg, "nothing was changed") || !strings.Contains(msg, "stopped its supervisor") ||
		!strings.Contains(msg, "could not record the kill") {
		t.Fatalf("the kill's error does not say what it did: %s", msg)
	}
	k.mu.Lock()
	heard, warned := k.heard, k.warned
	k.mu.Unlock()
	if heard != 1 {
		t.Fatalf("the kill said it waited for the lock %d times, want once", heard)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "stopping its supervisor (pid") {
		t.Fatalf("warnings: %q", warned)
	}
	if sup.Alive() {
		t.Fatal("the supervisor still runs")
	}
	if left := w.Manager.Containment(s.ID).Procs(); len(left) > 0 {
		t.Fatalf("left running: %v", left)
	}
}

// A settled session has no supervisor to force: a kill that cannot take
// its lock waits once, says nothing of forcing, and changes nothing.
func TestKillOfASettledSessionUnderAHeldLockForcesNothing(t *testing.T) {
	t.Parallel()
	k := newKillUnderLock(t, false)
	holdLock(t, k.w.Store.LockPath(k.s.ID))
	before, _ := os.ReadFile(k.w.Store.MetaPath(k.s.ID))
	r := k.kill(t, context.Background(), "")
	if !errors.Is(r.err, state.ErrLockTimeout) || !strings.Contains(r.err.Error(), "nothing was changed") {
		t.Fatalf("kill under a held lock: %v", r.err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.heard != 1 || len(k.warned) != 0 {
		t.Fatalf("the kill said it waited %d times, with warnings %q; want once, with no warning", k.heard, k.warned)
	}
	if after, _ := os.ReadFile(k.w.Store.MetaPath(k.s.ID)); string(after) != string(before) {
		t.Fatalf("the record changed:\n%s\n%s", before, after)
	}
}

// Ctrl+C while the kill waits for the lock changes nothing; once it has
// forced the supervisor, the kill goes on, records the kill with its
// reason and why it forced, and says so instead of a bare "interrupted".
func TestKillInterruptedAroundForcingALock(t *testing.T) {
	t.Parallel()
	k := newKillUnderLock(t, true)
	w, s := k.w, k.s
	// A holder that looks like the session's supervisor to the kill, and
	// does not let go (stopped).
	holder := exec.Command(os.Args[0], "__supervise", s.ID)
	holder.Env = append(os.Environ(), lockHolderEnv+"="+w.Store.LockPath(s.ID))
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	// Held by the holder, not by the session's supervisor for a moment: a
	// holder stopped before it took the lock would take it after the kill.
	waitHeldBy(t, w.Store.LockPath(s.ID), holder.Process.Pid)
	sessionstest.Stop(t, holder.Process.Pid)
	before, _ := os.ReadFile(w.Store.MetaPath(s.ID))

	// Interrupted while it waits.
	ctx, cancel := context.WithCancel(context.Background())
	w.Manager.SetLockWaiting(func(state.LockWait) { cancel() })
	r := k.kill(t, ctx, "")
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("kill interrupted while it waits: %v", r.err)
	}
	if after, _ := os.ReadFile(w.Store.MetaPath(s.ID)); string(after) != string(before) || !s.Owner.Alive() {
		t.Fatalf("the interrupted kill changed something:\n%s\n%s", before, after)
	}

	// Interrupted as it starts forcing.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	w.Manager.SetLockWaiting(func(state.LockWait) {})
	w.Manager.SetWarn(func(error) { cancel() })
	r = k.kill(t, ctx, "over budget")
	if r.err == nil || errors.Is(r.err, context.Canceled) ||
		!strings.Contains(r.err.Error(), "interrupted after stopping its supervisor") || !strings.Contains(r.err.Error(), "killed") {
		t.Fatalf("kill interrupted as it forced: %v", r.err)
	}
	got := w.wait(s.ID)
	if got.Status() != record.StatusKilled || !strings.HasPrefix(got.Error, "over budget (its lock was held by ") {
		t.Fatalf("%s: %s", got.Status(), got.Error)
	}
	if left := w.Manager.Containment(s.ID).Procs(); len(left) > 0 {
		t.Fatalf("left running: %v", left)
	}
}

// rm and clean that cannot take a session's lock say so the way their
// other errors do: "rm 1a2b: session 1a2b is still locked ...", whether or
// not the session has a worktree to claim first.
func TestRemoveUnderAHeldLockNamesTheCommand(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.wait(w.spawn("first").ID)
	w.WriteConfig("kill_grace = \"300ms\"\nlock_timeout = \"200ms\"\n")
	holdLock(t, w.Store.LockPath(s.ID))
	r := within(t, "rm", func() error { _, err := w.Manager.Remove(context.Background(), s.ID, false); return err })
	if want := "rm " + record.ShortID(s.ID) + ": session " + record.ShortID(s.ID) + " is still locked"; r == nil || !strings.HasPrefix(r.Error(), want) {
		t.Fatalf("rm under a held lock: %v, want it to start with %q", r, want)
	}
	c := within(t, "clean", func() error { _, err := w.Manager.Clean(context.Background(), sessions.CleanOptions{}); return err })
	if want := "clean " + record.ShortID(s.ID) + ": session " + record.ShortID(s.ID) + " is still locked"; c == nil || !strings.HasPrefix(c.Error(), want) {
		t.Fatalf("clean under a held lock: %v, want it to start with %q", c, want)
	}
}

// A kill that stopped everything but found the lock taken meanwhile says
// what it did, never that nothing was changed; other errors pass as they
// are.
func TestAKillStoppedButUnrecordedSaysWhatItDid(t *testing.T) {
	te := &state.LockTimeoutError{What: "session 1a2b", Holder: state.LockHolder{PID: 42, Command: "zwarm inject"}, After: time.Second}
	err := sessions.StoppedUnrecorded(fmt.Errorf("wrapped: %w", te))
	if !errors.Is(err, state.ErrLockTimeout) || strings.Contains(err.Error(), "nothing was changed") ||
		!strings.Contains(err.Error(), "stopped the session and everything it ran, but could not record it") {
		t.Fatalf("%v", err)
	}
	if te.Did != "" {
		t.Fatal("the original error was changed")
	}
	other := errors.New("disk on fire")
	if sessions.StoppedUnrecorded(other) != other {
		t.Fatal("an error other than a lock timeout was changed")
	}
}

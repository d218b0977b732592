package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
)

// holdLock starts a process that takes the session lock at path and holds
// it until the test ends (TestMain's lock holder), and returns its pid.
func holdLock(t *testing.T, path string) int {
	t.Helper()
	holder := exec.Command(os.Args[0], "hold-lock")
	holder.Env = append(os.Environ(), lockHolderEnv+"="+path, helperEnv+"=")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Signal(syscall.SIGTERM); holder.Wait() })
	waitHeldBy(t, path, holder.Process.Pid)
	return holder.Process.Pid
}

// waitHeldBy waits until the lock at path is held by pid, as a waiter is
// told (whatever the lock scheme): held by anyone is not enough, as a
// session's supervisor holds its lock for a moment now and then.
func waitHeldBy(t *testing.T, path string, pid int) {
	t.Helper()
	sessionstest.EventuallySee(t, fmt.Sprintf("the lock %s to be held by pid %d", path, pid), func() (bool, string) {
		ctx := store.WithLockPolicy(context.Background(), store.LockPolicy{Timeout: 10 * time.Millisecond})
		l, err := state.LockFileCtx(ctx, stateDirOfLock(path), path)
		if err == nil {
			l.Unlock()
			return false, "it free"
		}
		var te *state.LockTimeoutError
		if !errors.As(err, &te) {
			return false, err.Error()
		}
		return te.Holder.PID == pid, "it held by " + te.Holder.String()
	})
}

// stateDirOfLock is the state dir of a session's lock,
// <state dir>/sessions/<id>/.lock: the locks the tests' holders hold.
func stateDirOfLock(path string) string {
	return filepath.Dir(filepath.Dir(filepath.Dir(path)))
}

// within fails the test if f has not returned in a generous time: for
// calls that used to block forever.
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(60 * time.Second):
		t.Fatalf("%s hung", what)
		panic("unreachable")
	}
}

// startStray starts a process of session id that outlived it: with the
// session's marker, or, with cg, in a leaf of a cgroup the session's
// record names, without the marker.
func startStray(t *testing.T, w *world, id string, cg bool) int {
	t.Helper()
	// The settled session's supervisor may still be tearing down: it
	// kills what is in the session's cgroup on its way out. Its lock is
	// free once it has exited.
	l, err := state.LockFileCtx(ctxTimeout(t, time.Minute), w.Store.Dir(), w.Store.SupervisorLockPath(id))
	if err != nil {
		t.Fatalf("the settled session's supervisor had not exited (let go of its lock) after a minute: %v", err)
	}
	l.Unlock()
	cmd := exec.Command("sleep", "300")
	cmd.Env = append(os.Environ(), proc.MarkerEnv+"="+id)
	var leaf string
	if cg {
		parent, err := proc.OwnCgroupDir()
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(parent, "zwarm-"+id)
		leaf = filepath.Join(dir, "agent-9")
		if err := os.MkdirAll(leaf, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(leaf); os.Remove(dir) })
		// Tagged with the state dir, as a supervisor tags the cgroups
		// it makes: no other cgroup is taken for the session's.
		if err := unix.Setxattr(dir, proc.StateXattr, []byte(w.Store.Dir()), 0); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(w.Store.CgroupFile(id), []byte(dir+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd.Env = os.Environ()
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Reaped here once killed, so it is not a zombie for alive().
	reaped := make(chan struct{})
	go func() { cmd.Wait(); close(reaped) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select { // gone before its cgroup is removed
		case <-reaped:
		case <-time.After(time.Minute):
		}
	})
	if cg {
		if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			t.Fatal(err)
		}
	}
	return pid
}

func needCgroup(t *testing.T) {
	if how, err := proc.Containment(); !strings.HasPrefix(how, "cgroup") {
		t.Skipf("cgroup containment is not available here (%v): zwarm doctor says the same", err)
	}
}

// A session that completed, but whose process still runs in a leaf of its
// cgroup without the marker (its supervisor could not stop it): kill stops
// it, and says the session had completed; the status stays.
func TestKillStopsWhatASettledSessionLeft(t *testing.T) {
	needCgroup(t)
	w := newWorld(t)
	s := w.wait(w.spawn("first").ID)
	pid := startStray(t, w, s.ID, true)
	var warned []string
	w.Manager.SetWarn(func(err error) { warned = append(warned, err.Error()) })
	got, err := w.Manager.Kill(context.Background(), s.ID)
	if err != nil {
		t.Fatalf("kill of a completed session with a live process: %v", err)
	}
	sessionstest.Eventually(t, "the stray to die", func() bool { return !sessionstest.Alive(pid) })
	if got.Status() != record.StatusCompleted {
		t.Fatalf("the kill changed the status to %s", got.Status())
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "still running") {
		t.Fatalf("warnings: %q", warned)
	}
	// Nothing alive now: today's answer.
	if _, err := w.Manager.Kill(context.Background(), s.ID); !errors.Is(err, sessions.ErrNotRunning) || !strings.Contains(err.Error(), "it completed") {
		t.Fatalf("second kill: %v", err)
	}
}

// rm does not forget a settled session whose processes still run (found
// by its marker here, by its cgroup in the second round), unless forced,
// which stops them first.
func TestRemoveRefusesASettledSessionWithLiveProcesses(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, cg := range []bool{false, true} {
		if cg {
			if how, _ := proc.Containment(); !strings.HasPrefix(how, "cgroup") {
				continue
			}
		}
		s := w.wait(w.spawn("first").ID)
		pid := startStray(t, w, s.ID, cg)
		_, err := w.Manager.Remove(context.Background(), s.ID, false)
		if !errors.Is(err, sessions.ErrRunning) || !strings.Contains(err.Error(), "--force") {
			// What the stray was when rm looked past it: gone, or there
			// without its marker being seen.
			st, serr := proc.ReadStat(pid)
			t.Fatalf("cgroup=%v: rm without --force: %v (stray %d: alive %v, stat %+v %v, marker seen %v)", cg, err, pid,
				sessionstest.Alive(pid), st, serr, proc.HasMarker(pid, []byte(proc.MarkerEnv+"="+s.ID)))
		}
		if _, err := os.Stat(w.Store.MetaPath(s.ID)); err != nil || !sessionstest.Alive(pid) {
			t.Fatalf("cgroup=%v: the refused rm removed something: %v, alive %v", cg, err, sessionstest.Alive(pid))
		}
		if _, err := w.Manager.Remove(context.Background(), s.ID, true); err != nil {
			t.Fatalf("cgroup=%v: rm --force: %v", cg, err)
		}
		sessionstest.Eventually(t, "the stray to die", func() bool { return !sessionstest.Alive(pid) })
		if _, err := os.Stat(w.Store.SessionDir(s.ID)); !os.IsNotExist(err) {
			t.Fatalf("cgroup=%v: still there: %v", cg, err)
		}
	}
}

// Readers never wait for a writer's lock: with a session's lock and the
// session list's lock held, a listing and a look at a session whose owner
// died (which would record that) return.
func TestReadersDoNotWaitForLocks(t *testing.T) {
	w := newWorld(t)
	s := w.wait(w.spawn("first").ID)
	// A pending session whose spawning command died.
	dead := exec.Command("true")
	dead.Run()
	orphan, err := w.Store.Update(s.ID, func(tx *state.Tx) error {
		s := tx.Session()
		statusfield.Set(s, record.StatusPending)
		s.EndedAt, s.Owner = nil, &proc.Ref{PID: dead.Process.Pid, Start: 1, Role: record.RoleSpawn}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	holdLock(t, w.Store.LockPath(orphan.ID))
	// The session list's lock, held as a writer holds it, whatever the
	// state dir's lock scheme.
	held, release, bumped := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		bumped <- w.Store.BumpGeneration(context.Background(), func() error { close(held); <-release; return nil })
	}()
	select {
	case <-held:
		defer func() { close(release); <-bumped }()
	case err := <-bumped:
		t.Fatalf("hold the session list's lock: %v", err)
	}
	got := within(t, "show", func() *record.Session { g, _ := w.Manager.Get(context.Background(), s.ID); return g })
	if got == nil || got.Status() != record.StatusFailed {
		t.Fatalf("show of a session whose owner died: %+v", got)
	}
	list := within(t, "ls", func() []*record.Session { l, _ := w.Manager.List(context.Background(), listing.Options{}); return l })
	if len(list) != 1 || list[0].Status() != record.StatusFailed {
		t.Fatalf("ls: %v", list)
	}
}

// A command waits for a session's lock at most lock_timeout, says after a
// second what it waits for and who holds it, and then gives up, having
// changed nothing. A lock_timeout of 5 s is 4 s past the notice: a
// stalled waiter does not find the notice and the deadline due at once.
func TestWriterWaitsAtMostLockTimeout(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.wait(w.spawn("first").ID)
	w.WriteConfig("kill_grace = \"300ms\"\nlock_timeout = \"5s\"\n")
	holder := holdLock(t, w.Store.LockPath(s.ID))
	var mu sync.Mutex
	var heard []state.LockWait
	w.Manager.SetLockWaiting(func(lw state.LockWait) { mu.Lock(); heard = append(heard, lw); mu.Unlock() })
	before, _ := os.ReadFile(w.Store.MetaPath(s.ID))
	err := within(t, "inject", func() error { _, err := w.Manager.Inject(context.Background(), s.ID, "then this"); return err })
	var lte *state.LockTimeoutError
	if !errors.As(err, &lte) || lte.Holder.PID != holder || !strings.Contains(err.Error(), "lock_timeout") {
		t.Fatalf("inject under a held lock: %v; want a lock timeout naming the holder, pid %d, and lock_timeout", err, holder)
	}
	mu.Lock()
	if len(heard) != 1 || heard[0].Holder.PID != holder || heard[0].What != "session "+record.ShortID(s.ID) {
		t.Fatalf("heard %+v; want one notice, of session %s held by pid %d", heard, record.ShortID(s.ID), holder)
	}
	want := fmt.Sprintf("waiting for session %s: locked by pid %d, ", record.ShortID(s.ID), holder)
	if !strings.HasPrefix(heard[0].String(), want) {
		t.Fatalf("%q, want it to start with %q", heard[0], want)
	}
	mu.Unlock()
	if after, _ := os.ReadFile(w.Store.MetaPath(s.ID)); string(after) != string(before) {
		t.Fatalf("the record changed:\n%s\n%s", before, after)
	}
	if inbox, _ := w.Store.Inbox(s.ID); len(inbox) != 0 {
		t.Fatalf("inbox: %+v", inbox)
	}
}

// Inject interrupted while it waits for the lock (Ctrl+C) returns at once
// with an error wrapping context.Canceled and changes nothing: the
// session stays completed, no follow-up is left queued.
func TestInjectInterruptedWhileWaitingChangesNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.wait(w.spawn("first").ID)
	holdLock(t, w.Store.LockPath(s.ID))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.Manager.SetLockWaiting(func(state.LockWait) { cancel() }) // interrupted once it says it waits
	before, _ := os.ReadFile(w.Store.MetaPath(s.ID))
	err := within(t, "inject", func() error { _, err := w.Manager.Inject(ctx, s.ID, "then this"); return err })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted inject: %v", err)
	}
	if after, _ := os.ReadFile(w.Store.MetaPath(s.ID)); string(after) != string(before) {
		t.Fatalf("the record changed:\n%s\n%s", before, after)
	}
	if inbox, _ := w.Store.Inbox(s.ID); len(inbox) != 0 {
		t.Fatalf("inbox: %+v", inbox)
	}
	if g, _ := w.Manager.Get(context.Background(), s.ID); g.Status() != record.StatusCompleted || !g.Settled() {
		t.Fatalf("the session is %s: %s", g.Status(), g.Error)
	}
}

// A read-only state dir: kill still stops the session's processes (signals
// need no writes), then says the record could not be updated.
func TestKillInAReadOnlyStateDir(t *testing.T) {
	w := newWorld(t)
	dir := t.TempDir()
	w.SetScript(fakeagent.Script{Default: []map[string]any{
		fakeagent.Out(`{"type":"thread.started","thread_id":"t"}`),
		{"spawn": "sleep 300", "pidfile": filepath.Join(dir, "child.pid")},
		{"wait_file": filepath.Join(dir, "never")},
	}})
	s := w.spawn("hold")
	child := readPIDFile(t, filepath.Join(dir, "child.pid"))
	ro := sessionstest.ReadOnlyView(t, w.Store.Dir())
	rst, _ := state.NewStore(ro)
	m := sessions.NewManager(sessions.ManagerOptions{Store: rst, Adapters: testAdapters{}, SupervisorArgv: []string{os.Args[0]}})
	_, err := m.Kill(context.Background(), s.ID)
	if err == nil || errors.Is(err, sessions.ErrNotRunning) || !strings.Contains(err.Error(), "record could not be updated") || !strings.Contains(err.Error(), "stopped its processes") {
		t.Fatalf("kill in a read-only state dir: %v", err)
	}
	if sessionstest.Alive(child) || len(w.Manager.Containment(s.ID).Procs()) > 0 || len(proc.SupervisorsOf(s.ID)) > 0 {
		t.Fatalf("processes survive: child %v, %v, supervisors %v", sessionstest.Alive(child), w.Manager.Containment(s.ID).Procs(), proc.SupervisorsOf(s.ID))
	}
}

// While a kill finishes (its command still alive, the session already
// settled by its supervisor), a follow-up is refused: what the kill
// sweeps next must not be the follow-up's, and the kill must see the
// session it stopped settle, not a new turn.
func TestInjectWaitsForAKillToFinish(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.wait(w.spawn("first").ID)
	killer, err := proc.RefOf(os.Getppid()) // alive for the whole test
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Store.Update(s.ID, func(tx *state.Tx) error { s := tx.Session(); s.Killer = killer; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Manager.Inject(context.Background(), s.ID, "then this"); !errors.Is(err, sessions.ErrStopping) {
		t.Fatalf("inject while a kill finishes: %v", err)
	}
	if g, _ := w.Store.Load(s.ID); g.Status() != record.StatusCompleted || g.NextInboxSeq != s.NextInboxSeq {
		t.Fatalf("the refused follow-up changed the record: %s, seq %d", g.Status(), g.NextInboxSeq)
	}
	// A killer that is gone holds nothing up.
	if _, err := w.Store.Update(s.ID, func(tx *state.Tx) error {
		s := tx.Session()
		s.Killer = &proc.Ref{PID: killer.PID, Start: killer.Start + 1}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	res, err := w.Manager.Inject(context.Background(), s.ID, "then this")
	if err != nil || res.Session.Killer != nil {
		t.Fatalf("inject once the kill is done: %v, %+v", err, res)
	}
	if got := w.wait(s.ID); got.Status() != record.StatusCompleted || len(got.Turns) != 2 {
		t.Fatalf("%s, %d turns", got.Status(), len(got.Turns))
	}
	// Nor does a live one's stamp long after the session settled (a
	// long-lived process whose kill could not clear it).
	if _, err := w.Store.Update(s.ID, func(tx *state.Tx) error {
		s := tx.Session()
		ended := time.Now().Add(-2 * time.Minute)
		s.Killer, s.EndedAt = killer, &ended
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Manager.Inject(context.Background(), s.ID, "and this"); err != nil {
		t.Fatalf("inject past a stale kill stamp: %v", err)
	}
	if got := w.wait(s.ID); got.Status() != record.StatusCompleted || len(got.Turns) != 3 {
		t.Fatalf("%s, %d turns", got.Status(), len(got.Turns))
	}
}

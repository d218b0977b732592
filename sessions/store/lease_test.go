package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The tests' lock holders are this test binary, run again with helperEnv
// naming what to do (TestMain).
const (
	helperEnv      = "ZWARM_STORE_TEST_HELPER" // "hold" or "count"
	helperRootEnv  = "ZWARM_STORE_TEST_ROOT"
	helperPathEnv  = "ZWARM_STORE_TEST_PATH"
	helperLeaseEnv = "ZWARM_STORE_TEST_LEASE"
)

func TestMain(m *testing.M) {
	if what := os.Getenv(helperEnv); what != "" {
		os.Exit(helper(what))
	}
	os.Exit(m.Run())
}

// helper is a process that takes the lock: "hold" takes it, says "held"
// on stdout and holds it until killed; "count" adds one to the counter
// file beside it, under the lock, 20 times, and fails (exit 3) if it ever
// finds another process inside the lock with it.
func helper(what string) int {
	root, path := os.Getenv(helperRootEnv), os.Getenv(helperPathEnv)
	if d, err := time.ParseDuration(os.Getenv(helperLeaseEnv)); err == nil {
		leaseTime = d
	}
	switch what {
	case "hold":
		l, err := LockFile(context.Background(), root, path, "the test's lock")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer l.Unlock()
		fmt.Println("held")
		time.Sleep(time.Hour)
	case "count":
		for i := 0; i < 20; i++ {
			if code := countOnce(root, path); code != 0 {
				return code
			}
		}
	}
	return 0
}

func countOnce(root, path string) int {
	l, err := LockFile(context.Background(), root, path, "the counter")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer l.Unlock()
	inside := path + ".inside"
	f, err := os.OpenFile(inside, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "two holders at once:", err)
		return 3
	}
	f.Close()
	defer os.Remove(inside)
	counter := filepath.Join(filepath.Dir(path), "counter")
	b, _ := os.ReadFile(counter)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	time.Sleep(time.Millisecond) // a window for another holder to show
	if err := os.WriteFile(counter, []byte(strconv.Itoa(n+1)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startHolder starts a process holding the lock at path with the given
// lease, and returns it once it holds it.
func startHolder(t *testing.T, root, path string, lease time.Duration) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=hold", helperRootEnv+"="+root, helperPathEnv+"="+path, helperLeaseEnv+"="+lease.String())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "held\n" {
		t.Fatalf("the holder did not take the lock: %q, %v", line, err)
	}
	return cmd
}

// shortLeases makes this process's leases and margin short for a test.
func shortLeases(t *testing.T, lease, margin time.Duration) {
	oldLease, oldMargin := leaseTime, leaseMargin
	leaseTime, leaseMargin = lease, margin
	t.Cleanup(func() { leaseTime, leaseMargin = oldLease, oldMargin })
}

func leaseRoot(t *testing.T) (root, path string) {
	t.Setenv(LocksEnv, string(SchemeLease))
	root = t.TempDir()
	return root, filepath.Join(root, ".lock")
}

// Three processes add one to a counter 20 times each under the lock: no
// two are ever inside at once, and no addition is lost.
func TestLocksExcludeOtherProcesses(t *testing.T) {
	eachScheme(t, func(t *testing.T, s Scheme) {
		root := t.TempDir()
		path := filepath.Join(root, ".lock")
		var cmds []*exec.Cmd
		for i := 0; i < 3; i++ {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), helperEnv+"=count", helperRootEnv+"="+root, helperPathEnv+"="+path)
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, cmd)
		}
		for _, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("a counting process: %v", err)
			}
		}
		b, _ := os.ReadFile(filepath.Join(root, "counter"))
		if string(b) != "60" {
			t.Fatalf("counter %q, want 60", b)
		}
		if s == SchemeLease {
			if ents, _ := os.ReadDir(root); len(ents) != 1 {
				t.Fatalf("left in the lock's directory: %v", names(ents))
			}
		}
	})
}

func names(ents []os.DirEntry) []string {
	out := make([]string, len(ents))
	for i, e := range ents {
		out[i] = e.Name()
	}
	return out
}

// A live holder renews its lease: it is never broken, however long it
// holds the lock. Once it is killed, its lock stays until the lease and
// the margin have run out (by the file's time: its last renewal), and not
// a moment less; then a waiter breaks it and takes the lock. The lease is
// long enough that a holder starved of the CPU for seconds still renews
// it in time.
func TestAKilledHoldersLeaseIsBrokenOnceItRunsOut(t *testing.T) {
	root, path := leaseRoot(t)
	const lease, margin = 3 * time.Second, 1500 * time.Millisecond
	shortLeases(t, lease, margin)
	holder := startHolder(t, root, path, lease)

	ctx := WithLockPolicy(context.Background(), LockPolicy{Timeout: 3 * lease})
	_, err := LockFile(ctx, root, path, "the test's lock")
	var te *LockTimeoutError
	if !errors.As(err, &te) || te.Holder.PID != holder.Process.Pid || te.Holder.Command == "" {
		t.Fatalf("a lock held and renewed for three leases: %v; want a timeout naming pid %d and its command", err, holder.Process.Pid)
	}

	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	// Dead, it touches the file no more: the file's time is its last
	// renewal, and until the lease and the margin have run out since, every
	// look finds it locked. (The file system's clock is the coarse one,
	// never ahead of time.Now: the bound errs on the safe side.)
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatalf("the killed holder's lock file: %v; want it still there", err)
	}
	renewed := time.Unix(st.Mtim.Unix())
	until := renewed.Add(lease + margin)
	looks := 0
	var l *Lock
	for l == nil && time.Now().Before(until) {
		got, err := TryLease(root, path, "the test's lock")
		looked := time.Now() // the look was made before this
		looks++
		switch {
		case errors.Is(err, ErrLocked):
			time.Sleep(20 * time.Millisecond)
		case err == nil && !looked.Before(until):
			l = got // broken as the lease and margin ran out
		case err == nil:
			got.Unlock()
			t.Fatalf("the killed holder's lock was broken %s after its last renewal, before its lease and margin (%s) ran out; want it still locked",
				looked.Sub(renewed).Round(time.Millisecond), lease+margin)
		default:
			t.Fatalf("a look at the killed holder's lock %s after its last renewal: %v; want it still locked",
				looked.Sub(renewed).Round(time.Millisecond), err)
		}
	}
	t.Logf("locked at each of %d looks until %s after the last renewal", looks, until.Sub(renewed))
	if l == nil {
		l, err = LockFile(WithLockPolicy(context.Background(), LockPolicy{Timeout: time.Minute}), root, path, "the test's lock")
		if err != nil {
			t.Fatalf("the killed holder's lock was not broken within a minute of its lease and margin running out: %v", err)
		}
	}
	defer l.Unlock()
	rec, ok := readRecord(t, path)
	if !ok || rec.PID != os.Getpid() || rec.Token == "" || rec.Host == "" || rec.What != "the test's lock" {
		t.Fatalf("the lock file now: %+v (readable %v); want this process's record (pid %d) for the test's lock", rec, ok, os.Getpid())
	}
}

func readRecord(t *testing.T, path string) (leaseRecord, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseLease(b)
}

// A lock whose file is no longer ours (broken while its holder stalled,
// and taken by another; or rewritten in place) is left alone when its
// former holder lets go.
func TestReleaseLeavesALockThatIsNotOurs(t *testing.T) {
	root, path := leaseRoot(t)
	ctx := context.Background()

	// Broken and taken by another.
	l, err := LockFile(ctx, root, path, "first")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".moved"); err != nil {
		t.Fatal(err)
	}
	other, err := LockFile(ctx, root, path, "second")
	if err != nil {
		t.Fatal(err)
	}
	theirs, _ := readRecord(t, path)
	l.Unlock()
	if now, ok := readRecord(t, path); !ok || now.Token != theirs.Token {
		t.Fatalf("the other holder's lock after the first let go: %+v, %v", now, ok)
	}
	other.Unlock()
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the second holder's own release: %v", err)
	}

	// The same file, holding another token.
	l, err = LockFile(ctx, root, path, "third")
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := readRecord(t, path)
	rec.Token = "not-ours"
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if now, ok := readRecord(t, path); !ok || now.Token != "not-ours" {
		t.Fatalf("a lock file holding another token was removed or changed: %+v, %v", now, ok)
	}
}

// A lock file that cannot be read (empty, half-written, not a record) is
// a lock of an unknown holder, judged by its age alone: kept while it is
// younger than a lease and the margin (the default ones, 20 s: a stalled
// test still finds the new file young), broken once it is older.
func TestAnUnreadableLockFileIsStaleOnlyOnceOld(t *testing.T) {
	root, path := leaseRoot(t)
	for _, content := range []string{"", `{"host":"node07","pid":4242,"tok`, "not json\n"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		// Waiting 300 ms for what must not happen: the lock stays held.
		ctx := WithLockPolicy(context.Background(), LockPolicy{Timeout: 300 * time.Millisecond})
		_, err := LockFile(ctx, root, path, "the test's lock")
		var te *LockTimeoutError
		if !errors.As(err, &te) || te.Holder.PID != 0 || !strings.Contains(err.Error(), "locked by another process") {
			t.Fatalf("%q, new: %v; want a timeout naming no holder (\"locked by another process\")", content, err)
		}
		old := time.Now().Add(-time.Hour)
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
		l, err := LockFile(WithLockPolicy(context.Background(), LockPolicy{Timeout: time.Minute}), root, path, "the test's lock")
		if err != nil {
			t.Fatalf("%q, an hour old: %v; want it broken and taken", content, err)
		}
		if rec, ok := readRecord(t, path); !ok || rec.PID != os.Getpid() {
			t.Fatalf("%q: the lock file once taken: %+v (readable %v); want this process's record, pid %d", content, rec, ok, os.Getpid())
		}
		l.Unlock()
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Fatalf("left in the lock's directory: %v", names(ents))
	}
}

// Many waiters find the same stale lock at once: one breaks it, and they
// take the lock one at a time. The leases are the default ones (15 s and
// a margin of 5 s): a holder stalled for a second or two on a busy
// machine is not taken for a dead one; the stale lock is a minute old.
func TestOneWaiterAtATimeTakesAStaleLock(t *testing.T) {
	root, path := leaseRoot(t)
	for round := 0; round < 10; round++ {
		stale, _ := json.Marshal(leaseRecord{Host: "gone", PID: 1, Token: "stale", LeaseMS: 1000})
		if err := os.WriteFile(path, stale, 0o600); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Minute)
		os.Chtimes(path, old, old)
		var inside, most atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := LockFile(WithLockPolicy(context.Background(), LockPolicy{Timeout: time.Minute}), root, path, "the test's lock")
				if err != nil {
					errs <- err
					return
				}
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(2 * time.Millisecond)
				inside.Add(-1)
				l.Unlock()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		if most.Load() != 1 {
			t.Fatalf("round %d: %d holders at once; want one at a time", round, most.Load())
		}
		if ents, _ := os.ReadDir(root); len(ents) != 0 {
			t.Fatalf("round %d: left in the lock's directory: %v", round, names(ents))
		}
	}
}

// A kill that has itself killed a lock's holder breaks its lease lock at
// once; a live holder's, or another machine's, it leaves.
func TestBreakIfHolderGone(t *testing.T) {
	root, path := leaseRoot(t)
	holder := startHolder(t, root, path, leaseTime)
	if BreakIfHolderGone(root, path) {
		t.Fatal("broke a live holder's lock")
	}
	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	rec, _ := readRecord(t, path)
	foreign := rec
	foreign.Host = "node07"
	b, _ := json.Marshal(foreign)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if BreakIfHolderGone(root, path) {
		t.Fatal("broke the lock of a process of another machine")
	}
	b, _ = json.Marshal(rec)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if !BreakIfHolderGone(root, path) {
		t.Fatal("the lock of a holder that was killed here was not broken")
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the lock file: %v", err)
	}

	t.Setenv(LocksEnv, string(SchemeFlock))
	l, err := LockFile(context.Background(), root, path, "the test's lock")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if BreakIfHolderGone(root, path) {
		t.Fatal("broke a flock")
	}
}

// Which scheme a state dir's locks use: ZWARM_LOCKS, else [state] locks in
// its config.toml, else its file system (a local disk here: flock).
func TestSchemeOfAStateDir(t *testing.T) {
	t.Setenv(LocksEnv, "")
	dir := func(config string) string {
		root := t.TempDir()
		if config != "" {
			if err := os.WriteFile(filepath.Join(root, ConfigFile), []byte(config), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	for _, c := range []struct {
		config, env string
		want        Scheme
		err         string
	}{
		{want: SchemeFlock},
		{config: "[state]\nlocks = \"auto\"\n", want: SchemeFlock},
		{config: "[state]\nlocks = \"lease\"\n", want: SchemeLease},
		{config: "[state]\nlocks = \"lease\"\n", env: "flock", want: SchemeFlock},
		{config: "[state]\nlocks = \"lease\"\n", env: "auto", want: SchemeLease},
		{config: "not toml at all [", want: SchemeFlock},
		{config: "[state]\nlocks = \"nfs\"\n", err: `[state] locks = "nfs": want "flock", "lease" or "auto"`},
		{env: "posix", err: `ZWARM_LOCKS: locks = "posix"`},
	} {
		t.Setenv(LocksEnv, c.env)
		root := dir(c.config)
		got, err := SchemeOf(root, root)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q, env %q: %v, %v; want an error saying %s", c.config, c.env, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q, env %q: %v, %v; want %s", c.config, c.env, got, err, c.want)
		}
	}
}

// A lock taken the moment its holder lets go is as fresh as a renewed one:
// a waiter's lock file is its unique file under the lock's name, and that
// file's time is when the waiter last judged the lock, perhaps nearly a
// lease and a margin before. Linked as it was, another waiter could find
// the new lock stale at once and break it while its holder held it.
func TestALockTakenAfterAWaitIsFresh(t *testing.T) {
	root, path := leaseRoot(t)
	const lease, margin = 2 * time.Second, time.Second
	shortLeases(t, lease, margin)
	held, err := LockFile(context.Background(), root, path, "the first holder")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		l   *Lock
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := LockFile(WithLockPolicy(context.Background(), LockPolicy{Timeout: 2 * time.Minute}), root, path, "the waiter")
		got <- result{l, err}
	}()
	// The waiter is waiting once its unique file (.lock.TOKEN) is beside
	// the lock. Then a second passes: time enough for its last look at the
	// lock to be old when the lock is let go. (The wait makes the case;
	// no outcome waits on it.)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		ents, _ := os.ReadDir(root)
		if slices.ContainsFunc(ents, func(e os.DirEntry) bool {
			return strings.HasPrefix(e.Name(), ".lock.") && strings.Count(e.Name(), ".") == 2
		}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no waiter's unique file beside the lock within a minute; files: %v", names(ents))
		}
	}
	time.Sleep(time.Second)
	released := time.Now()
	held.Unlock()
	r := <-got
	if r.err != nil {
		t.Fatalf("the waiter: %v; want the lock once the first holder let go", r.err)
	}
	defer r.l.Unlock()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// File times are the kernel's coarse clock, a few ms behind time.Now.
	if mt := info.ModTime(); mt.Before(released.Add(-100 * time.Millisecond)) {
		t.Fatalf("the lock the waiter took bears the time %s before it was let go (its last look at the lock); want the time it was taken",
			released.Sub(mt).Round(time.Millisecond))
	}
}

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"golang.org/x/sys/unix"
)

// holdSessionLock takes a session's lock in this process, noting itself as
// its holder the way zwarm does, until the test ends.
func holdSessionLock(t *testing.T, w *world, id string) {
	t.Helper()
	holdLock(t, filepath.Join(w.State, "sessions", id, ".lock"), "zwarm kill")
}

// holdLock takes the lock file at path, noting this process as its holder
// running command, until the test ends or the returned func is called.
func holdLock(t *testing.T, path, command string) (release func()) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	f.Truncate(0)
	fmt.Fprintf(f, "%d %s\n", os.Getpid(), command)
	var once sync.Once
	release = func() { once.Do(func() { f.Truncate(0); f.Close() }) }
	t.Cleanup(release)
	return release
}

// waitingLine starts cmd and returns the first line it writes on stderr
// that says it waits for a lock; cmd is killed and t failed if none comes
// in 30 s. The rest of its stderr is drained as it comes.
func waitingLine(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	said := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "waiting for") {
				select {
				case said <- sc.Text():
				default:
				}
			}
		}
	}()
	select {
	case line := <-said:
		return line
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s never said it was waiting for a lock", cmd.Args[1])
	}
	return ""
}

// A landing waits for the one before it as long as that takes, and says
// who it waits for; then it lands.
func TestLandSaysWhoseLandingItWaitsFor(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	w.setScript(agentDoes("echo b > b.txt"))
	id := w.spawn("add b")
	w.ok("wait", id)
	release := holdLock(t, filepath.Join(w.State, "land.lock"), "zwarm land 0000abcd")
	cmd := exec.Command(bins.zwarm, "land", id)
	cmd.Dir, cmd.Env = w.Work, w.env()
	want := fmt.Sprintf("zwarm: waiting for another landing: locked by pid %d, zwarm land 0000abcd", os.Getpid())
	if line := waitingLine(t, cmd); line != want {
		t.Errorf("said %q, want %q", line, want)
	}
	release()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("land after the lock was released: %v", err)
	}
	if got := w.git(w.Work, "show", "HEAD:b.txt"); got != "b" {
		t.Fatalf("b.txt on main: %q", got)
	}
}

// Ctrl+C on inject while it waits for the session's lock (held by a
// stopped kill, say): it says what it waits for, then ends at once with
// 130, and the session is as it was: completed, nothing queued.
func TestInjectInterruptedWhileWaitingForTheLock(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.spawn("first")
	w.ok("wait", id)
	holdSessionLock(t, w, id)
	before, _ := os.ReadFile(filepath.Join(w.State, "sessions", id, "meta.json"))

	cmd := exec.Command(bins.zwarm, "inject", id, "then this")
	cmd.Dir, cmd.Env = w.Work, w.env()
	// A job of its own, as a shell runs it: Ctrl+C signals the whole group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	line := waitingLine(t, cmd)
	want := fmt.Sprintf("zwarm: waiting for session %s: locked by pid %d, zwarm kill", record.ShortID(id), os.Getpid())
	if line != want {
		t.Fatalf("said %q, want %q", line, want)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("inject went on waiting after Ctrl+C")
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want 130", err)
	}
	if after, _ := os.ReadFile(filepath.Join(w.State, "sessions", id, "meta.json")); string(after) != string(before) {
		t.Fatalf("the record changed:\n%s\n%s", before, after)
	}
	if ents, _ := os.ReadDir(filepath.Join(w.State, "sessions", id, "inbox")); len(ents) != 0 {
		t.Fatalf("inbox: %v", ents)
	}
}

// A command waits for a held lock at most lock_timeout, then fails with
// exit 1 saying who holds it and which setting to raise.
func TestInjectGivesUpAfterLockTimeout(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.spawn("first")
	w.ok("wait", id)
	if err := os.WriteFile(filepath.Join(w.State, "config.toml"), []byte("lock_timeout = \"1500ms\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	holdSessionLock(t, w, id)
	r := w.zwarm("inject", id, "then this")
	if r.code != 1 || !strings.Contains(r.stderr, fmt.Sprintf("locked by pid %d, zwarm kill after 1.5s", os.Getpid())) ||
		!strings.Contains(r.stderr, "lock_timeout") || !strings.Contains(r.stderr, "waiting for session") ||
		strings.Contains(r.stderr, ".lock:") || strings.Contains(r.stderr, id) {
		// The message says what is locked once, by its short id, not
		// wrapped in the lock file's path and the full id again.
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if s := w.record(id); s.Status() != record.StatusCompleted || s.PendingInjects != 0 {
		t.Fatalf("%s, %d pending", s.Status(), s.PendingInjects)
	}
}

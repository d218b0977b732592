package sessionstest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
)

// Eventually fails t unless cond holds within a minute, looking every few
// milliseconds. The minute is a ceiling, not a wait: generous, for a
// machine at load 8 and more.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	EventuallySee(t, what, func() (bool, string) { return cond(), "" })
}

// EventuallySee is Eventually for a condition that says what it saw: the
// failure says what was awaited and what was seen last.
func EventuallySee(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, saw := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if saw == "" {
				t.Fatalf("timed out after a minute waiting for %s", what)
			}
			t.Fatalf("timed out after a minute waiting for %s; saw %s", what, saw)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Alive reports whether pid runs: it is neither gone nor a zombie.
func Alive(pid int) bool {
	st, err := proc.ReadStat(pid)
	return err == nil && st.State != 'Z' && st.State != 'X'
}

// MarkedProcs are the live processes, this one aside, whose environment
// carries session id's marker: whatever a session's agents left running.
func MarkedProcs(id string) []int {
	want := []byte(proc.MarkerEnv + "=" + id + "\x00")
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && bytes.Contains(append(b, 0), want) && Alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// Stop stops pid with SIGSTOP and returns once every one of its threads
// has stopped. The signal is not synchronous: until one of its threads
// takes it, the process runs on (for milliseconds at load), and a test
// that means to act behind a stopped process's back would race it.
func Stop(t testing.TB, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("stop pid %d: %v", pid, err)
	}
	EventuallySee(t, fmt.Sprintf("pid %d to stop", pid), func() (bool, string) {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return false, err.Error()
		}
		for _, task := range tasks {
			tid, _ := strconv.Atoi(task.Name())
			st, err := proc.ReadStat(tid) // a thread's /proc/<tid> is there too
			if err != nil {
				continue // the thread ended
			}
			if st.State != 'T' && st.State != 't' {
				return false, fmt.Sprintf("thread %d in state %c", tid, st.State)
			}
		}
		return true, ""
	})
}

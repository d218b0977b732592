package proc

import (
	"math/rand"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// An exit read for a pidfd just removed, whose number the kernel then gave
// to another process's pidfd, must not be taken for that process's exit:
// its watch would be dropped, and its later death (a supervisor's SIGKILL)
// never seen. Each round removes a dead process's watch while its event may
// be in flight and adds a live one's, which gets the freed number.
func TestAnExitOfARemovedWatchIsNotAnothersExit(t *testing.T) {
	w, err := NewExitWatch()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	live := exec.Command("sleep", "600")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	liveRef, err := RefOf(live.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 1500
	wrong := 0
	for i := range rounds {
		dying := exec.Command("sleep", "600")
		if err := dying.Start(); err != nil {
			t.Fatal(err)
		}
		dyingRef, err := RefOf(dying.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		w.Remove("live")
		w.Drain()
		w.Add("dying", dyingRef)
		syscall.Kill(dying.Process.Pid, syscall.SIGKILL)
		// A varying pause, so the remove lands at every point of the
		// loop's handling of the exit.
		for start, spin := time.Now(), time.Duration(rand.Intn(60))*time.Microsecond; time.Since(start) < spin; {
		}
		w.Remove("dying")
		w.Add("live", liveRef)
		dying.Wait()
		time.Sleep(2 * time.Millisecond)
		w.mu.Lock()
		_, watched := w.byKey["live"]
		w.mu.Unlock()
		exited := false
		for _, k := range w.Drain() {
			exited = exited || k == "live"
		}
		if !watched || exited {
			if wrong++; wrong == 1 {
				t.Errorf("round %d: the live process %d was reported exited (%v) or left unwatched (%v)", i, liveRef.PID, exited, !watched)
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d rounds took a removed watch's exit for a live process's", wrong, rounds)
	}
}

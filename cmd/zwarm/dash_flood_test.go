package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// dashPeakLimit is the resident memory the dashboard may reach on a session
// whose agent prints millions of lines: a resource bound it promises.
const dashPeakLimit = 200 << 20

// The dashboard follows a session while its agent prints 3 million lines
// (1.4 GB) and stays within its memory bound: it reads a running turn one
// window at a time, however far behind it falls.
func TestDashboardMemoryWhileASessionFloods(t *testing.T) {
	// Not in parallel: a process starved of CPU by its neighbours
	// collects late, and its peak says more about them than about it.
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(append([]fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		{"wait_file": gate},
		{"out_lines": 3_000_000},
	}, fakeagent.Completes("the flood is over", 10)[1:]...))
	id := w.spawn("flood the dashboard")

	cmd := exec.Command(bins.zwarm, "dash")
	cmd.Dir, cmd.Env = w.Work, w.env()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		b := make([]byte, 64<<10)
		for {
			n, err := f.Read(b)
			mu.Lock()
			screen.Write(b[:n])
			if screen.Len() > 1<<20 { // the latest frames are enough
				tail := append([]byte(nil), screen.Bytes()[screen.Len()-(256<<10):]...)
				screen.Reset()
				screen.Write(tail)
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	shows := func(what string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return strings.Contains(visible(screen.String()), what)
		}
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	quit := false
	defer func() {
		if !quit {
			cmd.Process.Kill()
			<-exited
		}
	}()
	sessionstest.Eventually(t, "the dashboard's first frame", shows("q quit"))
	touch(t, gate)
	// The supervisor, codex's parser and all, stays within its own bound:
	// its peak is read while it runs (it exits with the session).
	// Ceilings, not waits: 3 million lines take long on a loaded machine.
	const floodLimit = 5 * time.Minute
	var supPeak int64
	deadline := time.Now().Add(floodLimit)
	for rec := w.record(id); rec.Status() != "completed"; rec = w.record(id) {
		if time.Now().After(deadline) {
			t.Fatalf("the flooding session had not completed %s on: it is %s %q", floodLimit, rec.Status(), rec.Error)
		}
		if o := rec.Owner; o != nil && o.Role == "supervisor" {
			supPeak = max(supPeak, procPeak(o.PID))
		}
		io.WriteString(f, "j") // keys while the flood goes on
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("supervisor peak RSS %.1f MiB (as last seen)", float64(supPeak)/(1<<20))
	if supPeak == 0 || supPeak > 64<<20 {
		t.Errorf("the supervisor's peak RSS was %d MiB (0: never seen), over 64 MiB", supPeak>>20)
	}
	if !waitUntil(shows("the flood is over"), floodLimit) {
		mu.Lock()
		t.Fatalf("the session's last message %q was not on screen %s after it completed; the last frames:\n%s", "the flood is over", floodLimit, visible(screen.String()[max(0, screen.Len()-8000):]))
	}
	io.WriteString(f, "kkjj")
	peak := vmHWM(t, cmd.Process.Pid)
	io.WriteString(f, "q")
	select {
	case err := <-exited:
		quit = true
		if err != nil {
			t.Fatalf("dashboard: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the dashboard had not quit a minute after q was typed")
	}
	t.Logf("dashboard peak RSS %.1f MiB", float64(peak)/(1<<20))
	if peak > dashPeakLimit {
		t.Fatalf("the dashboard's peak RSS was %d MiB, over %d MiB", peak>>20, dashPeakLimit>>20)
	}
}

// vmHWM is a live process's peak resident memory in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	peak := procPeak(pid)
	if peak == 0 {
		t.Fatalf("no VmHWM for pid %d", pid)
	}
	return peak
}

// procPeak is VmHWM of /proc/PID/status in bytes, 0 if it cannot be read.
func procPeak(pid int) int64 {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// waitUntil polls cond for at most limit.
func waitUntil(cond func() bool, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// peakFileEnv names a file where a zwarm run by a test writes its peak
// resident memory (VmHWM) as it exits: the rusage of a child counts the
// memory of the test process that forked it, so it cannot tell.
const peakFileEnv = "ZWARM_TEST_PEAK_FILE"

// peakReported is zwarm that reports its peak to $ZWARM_TEST_PEAK_FILE.
func peakReported(main func([]string) int) func([]string) int {
	return func(args []string) int {
		code := main(args)
		if path := os.Getenv(peakFileEnv); path != "" {
			os.WriteFile(path, []byte(strconv.FormatInt(procPeak(os.Getpid()), 10)), 0o600)
		}
		return code
	}
}

// logsPeakLimit is the resident memory `zwarm logs` may reach on a turn of
// any size: it streams what it prints.
const logsPeakLimit = 128 << 20

// logs and logs -f print a running turn of 3 million lines in bounded
// memory: what a turn already holds is read as it is printed, and what it
// grows by is read a bounded stretch at a time, however fast it grows.
func TestLogsOfARunningFloodInBoundedMemory(t *testing.T) {
	// Not in parallel: a process starved of CPU by its neighbours
	// collects late, and its peak says more about them than about it.
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(append([]fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		{"out_lines": 3_000_000},
		{"wait_file": gate},
	}, fakeagent.Completes("the flood is over", 10)[1:]...))
	id := w.spawn("flood the logs")
	turn := filepath.Join(w.State, "sessions", id, "turns", "turn_1.jsonl")
	// The flood is written when the turn file stops growing.
	var size int64
	for still := 0; still < 3; time.Sleep(300 * time.Millisecond) {
		fi, err := os.Stat(turn)
		if err == nil && fi.Size() == size && size > 0 {
			still++
			continue
		}
		if err == nil {
			size, still = fi.Size(), 0
		}
	}
	t.Logf("a running turn of %d MiB", size>>20)
	if rec := w.record(id); rec.Status() != "running" {
		t.Fatalf("the session is %s, want running", rec.Status())
	}
	peak := func(args ...string) int64 {
		peakFile := filepath.Join(t.TempDir(), "peak")
		cmd := exec.Command(bins.zwarm, args...)
		cmd.Dir, cmd.Env, cmd.Stdout = w.Work, append(w.env(), peakFileEnv+"="+peakFile), io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if len(args) > 2 { // -f: the session ends meanwhile
			time.Sleep(2 * time.Second)
			touch(t, gate)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("zwarm %v: %v", args, err)
		}
		b, err := os.ReadFile(peakFile)
		if err != nil {
			t.Fatalf("zwarm %v did not report its peak: %v", args, err)
		}
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil || n <= 0 {
			t.Fatalf("zwarm %v reported a peak of %q", args, b)
		}
		return n
	}
	for _, args := range [][]string{{"logs", id}, {"logs", id, "-f"}} {
		p := peak(args...)
		t.Logf("zwarm %s: peak RSS %.1f MiB", strings.Join(args, " "), float64(p)/(1<<20))
		if p > logsPeakLimit {
			t.Errorf("zwarm %s: peak RSS %d MiB, over %d MiB", strings.Join(args, " "), p>>20, logsPeakLimit>>20)
		}
	}
	if rec := w.record(id); rec.Status() != "completed" || rec.LastMessage != "the flood is over" {
		t.Fatalf("after logs -f the session is %s (%q), want completed with its last message", rec.Status(), rec.LastMessage)
	}
}

package sessions_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// supervisorPeakLimit is the resident memory a supervisor may reach,
// whatever its agent prints: a resource bound, part of what it promises.
const supervisorPeakLimit = 64 << 20

// reportPeak writes the peak resident memory of session id's supervisor
// to peak-<id> in its state dir, if the test asked for it (peakWanted).
func reportPeak(stateDir, id string) {
	if _, err := os.Stat(filepath.Join(stateDir, peakWanted)); err != nil {
		return
	}
	path := filepath.Join(stateDir, "peak-"+id)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			os.WriteFile(path, []byte(strings.TrimSpace(rest)), 0o600)
		}
	}
}

// supervisorPeak runs a session of the script to its end and returns it
// with its supervisor's peak resident memory in bytes.
func supervisorPeak(t *testing.T, w *world, task string) (*record.Session, int64) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.Store.Dir(), peakWanted), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := w.waitFor(w.spawn(task).ID, 5*time.Minute)
	peakFile := filepath.Join(w.Store.Dir(), "peak-"+s.ID)
	var data []byte
	sessionstest.Eventually(t, "the supervisor's peak memory", func() bool {
		var err error
		data, err = os.ReadFile(peakFile)
		return err == nil && len(data) > 0
	})
	kb, err := strconv.ParseInt(strings.TrimSuffix(string(data), " kB"), 10, 64)
	if err != nil {
		t.Fatalf("peak %q: %v", data, err)
	}
	return s, kb << 10
}

// A line longer than MaxLineBytes is cut from the turn file, a marker in
// its place saying how long it was, and every other byte is kept; the
// supervisor never holds the line, so its memory stays bounded.
func TestSupervisorCutsAHugeLineInBoundedMemory(t *testing.T) {
	t.Parallel()
	const huge = 500 << 20
	for _, tc := range []struct {
		name  string
		steps []map[string]any
		cut   int64  // the bytes the marker says were cut
		tail  string // what follows the marker in the turn file
	}{
		{"then a message", append([]map[string]any{{"line_bytes": huge}}, fakeagent.Completes("after the flood", 900)[2:]...), huge - 1,
			`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"after the flood"}}` + "\n" +
				`{"type":"turn.completed","usage":{"input_tokens":900,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}` + "\n"},
		{"with no newline", []map[string]any{{"partial_bytes": huge}}, huge, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			head := fakeagent.Completes("", 0)[:2]
			w.SetScript(fakeagent.Script{Default: append(head, tc.steps...)})
			s, peak := supervisorPeak(t, w, "print a flood")
			t.Logf("supervisor peak RSS %.1f MiB", float64(peak)/(1<<20))
			if tc.tail != "" && (s.Status() != record.StatusCompleted || s.LastMessage != "after the flood" || s.Usage.InputTokens != 900) {
				t.Fatalf("%s %q %+v: %s", s.Status(), s.LastMessage, s.Usage, s.Error)
			}
			got, err := os.ReadFile(w.Store.TurnPath(s.ID, 1))
			if err != nil {
				t.Fatal(err)
			}
			want := `{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}` + "\n" +
				`{"type":"turn.started"}` + "\n" + fmt.Sprintf(`{"type":"zwarm.truncated","bytes":%d}`, tc.cut) + "\n" + tc.tail
			if string(got) != want {
				t.Fatalf("turn file:\n%.2000s\nwant:\n%s", got, want)
			}
			if peak > supervisorPeakLimit {
				t.Fatalf("the supervisor's peak RSS was %d MiB, over %d MiB", peak>>20, supervisorPeakLimit>>20)
			}
		})
	}
}

// Millions of ordinary lines do not grow the supervisor either, and every
// one of them is recorded.
func TestSupervisorMemoryBoundedByManyLines(t *testing.T) {
	t.Parallel()
	const lines = 3_000_000
	w := newWorld(t)
	w.SetScript(fakeagent.Script{Default: append([]map[string]any{{"out_lines": lines}}, fakeagent.Completes("all done", 900)...)})
	s, peak := supervisorPeak(t, w, "print a lot")
	if s.Status() != record.StatusCompleted || s.LastMessage != "all done" {
		t.Fatalf("%s %q: %s", s.Status(), s.LastMessage, s.Error)
	}
	f, err := os.Open(w.Store.TurnPath(s.ID, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, r := 0, bufio.NewReaderSize(f, 1<<20)
	buf := make([]byte, 1<<20)
	for {
		k, err := r.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err != nil {
			break
		}
	}
	if n != lines+4 {
		t.Fatalf("the turn file has %d lines, want %d", n, lines+4)
	}
	t.Logf("supervisor peak RSS %.1f MiB", float64(peak)/(1<<20))
	if peak > supervisorPeakLimit {
		t.Fatalf("the supervisor's peak RSS was %d MiB, over %d MiB", peak>>20, supervisorPeakLimit>>20)
	}
}

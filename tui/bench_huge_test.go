package tui

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/sessions/record"
)

// hugeTurnFile makes a turn file of 3 million lines of codex events with
// sessions/internal/mkstate (as docs/performance.md's figures are); the
// last message it holds is "Step 498337 done; the tests pass.".
func hugeTurnFile(b *testing.B) string {
	dir := b.TempDir()
	out, err := exec.Command("go", "run", "../sessions/internal/mkstate", "-dir", dir, "-n", "1", "-turns", "1", "-turn-lines", "3000000").CombinedOutput()
	if err != nil {
		b.Fatalf("mkstate: %v\n%s", err, out)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "turns", "turn_1.jsonl"))
	if len(paths) != 1 {
		b.Fatalf("mkstate made %d turn files", len(paths))
	}
	return paths[0]
}

// BenchmarkRunningTurnGrows3MLines is the dashboard on a running session
// whose turn grows by 3 million lines (1.4 GB) while it is selected: from
// the append until the pane shows the last step. It reports the longest
// single Update (what a key pressed meanwhile waits for at most) and the
// heap in use once the pane has caught up.
func BenchmarkRunningTurnGrows3MLines(b *testing.B) {
	src := hugeTurnFile(b)
	for b.Loop() {
		b.StopTimer()
		f := newFixture(b)
		id := f.add(1, record.StatusRunning, "live", time.Minute)
		m := f.newModel(120, 40)
		b.StartTimer()
		appendFile(b, filepath.Join(f.dir, "sessions", id, "turns", "turn_1.jsonl"), src)
		var longest time.Duration
		deadline := time.After(10 * time.Minute)
		for !strings.Contains(m.detail.View(), "Step 498337 done") {
			select {
			case a := <-harness:
				t0 := time.Now()
				m = deliver(m, a)
				if _, batch := a.msg.(tea.BatchMsg); !batch {
					longest = max(longest, time.Since(t0))
				}
			case <-deadline:
				b.Fatalf("the pane never caught up; it shows:\n%s", m.View())
			}
		}
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(longest.Microseconds())/1000, "longest-update-ms")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
		b.StartTimer()
	}
}

func appendFile(b *testing.B, dst, src string) {
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
}

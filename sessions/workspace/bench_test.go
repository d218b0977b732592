package workspace

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkApplyTreeLargeBinary lands (ApplyTree: the path of a worker
// spawned --with-changes, and of a part landed before) a change holding
// a 150 MB binary file. The patch streams from git diff into git apply:
// zwarm's own heap stays small whatever the file's size (heap-MB/op);
// the rest of the time and memory is git's.
func BenchmarkApplyTreeLargeBinary(b *testing.B) {
	repo := filepath.Join(b.TempDir(), "api")
	os.MkdirAll(repo, 0o755)
	run := func(script string) string {
		b.Helper()
		out, err := (git{dir: repo}).run(context.Background(), "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "--allow-empty", "-m", script)
		if err != nil {
			b.Fatal(err, out)
		}
		return out
	}
	if _, err := (git{dir: repo}).run(context.Background(), "init", "-q", "-b", "main"); err != nil {
		b.Fatal(err)
	}
	run("base")
	base, _ := (git{dir: repo}).line(context.Background(), "rev-parse", "HEAD")
	blob := make([]byte, 150<<20)
	rand.Read(blob)
	if err := os.WriteFile(filepath.Join(repo, "model.bin"), blob, 0o644); err != nil {
		b.Fatal(err)
	}
	blob = nil
	if _, err := (git{dir: repo}).run(context.Background(), "add", "model.bin"); err != nil {
		b.Fatal(err)
	}
	run("model")
	head, _ := (git{dir: repo}).line(context.Background(), "rev-parse", "HEAD")
	commonDir := filepath.Join(repo, ".git")
	b.ResetTimer()
	var peak uint64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := ApplyTree(context.Background(), commonDir, base, base, head); err != nil {
			b.Fatal(err)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		peak = max(peak, after.TotalAlloc-before.TotalAlloc)
	}
	b.ReportMetric(float64(peak)/(1<<20), "heap-MB/op")
}

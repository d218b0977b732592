package workspace

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
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

// benchRepo20000 makes a repository of 20,000 source files in 400
// directories (about 30 MB), one commit, as a mid-sized project has, and
// returns it and its commit.
func benchRepo20000(b *testing.B) (string, string) {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "api")
	body := strings.Repeat("// Package code is generated for the benchmark; each line is a realistic width.\n", 18)
	for i := range 20000 {
		path := filepath.Join(dir, fmt.Sprintf("pkg%03d", i/50), fmt.Sprintf("sub%d", i%5), fmt.Sprintf("file%05d.go", i))
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(fmt.Sprintf("package p%d\n\n%s", i/50, body)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	g := git{dir: dir}
	// Packed, as a repository of that size is once cloned, or once git gc
	// --auto (which git commit runs) has seen its loose objects.
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}, {"repack", "-a", "-d", "-q"}, {"prune-packed"}} {
		if _, err := g.run(context.Background(), args...); err != nil {
			b.Fatal(err)
		}
	}
	head, _ := g.line(context.Background(), "rev-parse", "HEAD")
	return dir, head
}

// BenchmarkSweepInRepo20000Files looks for the special files a worker may
// have left (none here) in a worktree of the 20,000-file repository, as
// each turn's commit does before git reads the worktree: whole, reading
// every directory (the first turn's), and again after a sweep that found
// none (every later turn's, which stats the directories it read).
func BenchmarkSweepInRepo20000Files(b *testing.B) {
	repo, head := benchRepo20000(b)
	w := &Worktree{Path: filepath.Join(b.TempDir(), "wt", "3f2a9c1d-0000-4000-8000-000000000001"), CommonDir: filepath.Join(repo, ".git"), Branch: BranchFor("3f2a9c1d-0000-4000-8000-000000000001")}
	if err := w.Add(context.Background(), head); err != nil {
		b.Fatal(err)
	}
	time.Sleep(racyWithin) // the checkout's directories are remembered
	sweep := func(b *testing.B) {
		if removed, err := w.sweepSpecial(); err != nil || len(removed) != 0 {
			b.Fatal(removed, err)
		}
	}
	b.Run("whole", func(b *testing.B) {
		for range b.N {
			os.Remove(sweptFile(w.Path))
			sweep(b)
		}
	})
	b.Run("again", func(b *testing.B) {
		sweep(b)
		b.ResetTimer()
		for range b.N {
			sweep(b)
		}
	})
}

// BenchmarkAddInRepo20000Files makes a worker's worktree of the
// 20,000-file repository, its own repository included (zwarm), beside
// git's own checkout of the same tree into a new linked worktree (git):
// the floor, since a worker needs the files checked out.
func BenchmarkAddInRepo20000Files(b *testing.B) {
	repo, head := benchRepo20000(b)
	ctx := context.Background()
	root := filepath.Join(b.TempDir(), "wt")
	b.Run("zwarm", func(b *testing.B) {
		for i := range b.N {
			w := &Worktree{Path: filepath.Join(root, fmt.Sprintf("3f2a9c1d-0000-4000-8000-%012d", i)), CommonDir: filepath.Join(repo, ".git"), Branch: BranchFor(fmt.Sprintf("3f2a9c1d-0000-4000-8000-%012d", i))}
			if err := w.Add(ctx, head); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := w.Remove(ctx, false); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	b.Run("git", func(b *testing.B) {
		g := git{dir: repo, writes: true}
		for i := range b.N {
			path := filepath.Join(root, fmt.Sprintf("git-%d", i))
			if _, err := g.run(ctx, "worktree", "add", "--quiet", "--detach", "-f", path, head); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if _, err := g.run(ctx, "worktree", "remove", "--force", "--force", path); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}

// BenchmarkDiffStatInRepo20000Files is the diffstat of a worker that
// changed 5 of the 20,000 files, read from its worktree as it is (what
// it did not commit included: zwarm; zwarm-after-a-new-file when the
// scan of its last read no longer holds), beside git diff --stat run in the worktree against the
// same base (git).
func BenchmarkDiffStatInRepo20000Files(b *testing.B) {
	repo, head := benchRepo20000(b)
	ctx := context.Background()
	w := &Worktree{Path: filepath.Join(b.TempDir(), "wt", "3f2a9c1d-0000-4000-8000-000000000001"), CommonDir: filepath.Join(repo, ".git"), Branch: BranchFor("3f2a9c1d-0000-4000-8000-000000000001")}
	if err := w.Add(ctx, head); err != nil {
		b.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		f, err := os.OpenFile(filepath.Join(w.Path, fmt.Sprintf("pkg%03d/sub0/file%05d.go", i, i*50)), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		f.WriteString("// changed\n")
		f.Close()
	}
	opt := DiffOptions{Format: StatOnly}
	// Both read the files the change left warm: the first read after the
	// writes is neither's alone. The worktree then rests past a scan's
	// racy window, as it does between a worker's change and a person's
	// look at it, and zwarm's second read keeps its scan.
	if err := w.WorkingDiff(ctx, io.Discard, head, opt); err != nil {
		b.Fatal(err)
	}
	if _, err := (git{dir: w.Path}).run(ctx, "diff", "--stat", head); err != nil {
		b.Fatal(err)
	}
	settle()
	if err := w.WorkingDiff(ctx, io.Discard, head, opt); err != nil {
		b.Fatal(err)
	}
	if w.recall() == nil {
		b.Fatal("no scan kept of the resting worktree")
	}
	b.Run("zwarm", func(b *testing.B) {
		for range b.N {
			if err := w.WorkingDiff(ctx, io.Discard, head, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The first diff after a file is made or removed: the scan does not
	// hold, and zwarm walks the worktree as git status does (and reads
	// again the directory that changed) to keep a new one.
	b.Run("zwarm-after-a-new-file", func(b *testing.B) {
		tmp := filepath.Join(w.Path, "pkg007", "editor.swp")
		for range b.N {
			b.StopTimer()
			os.WriteFile(tmp, nil, 0o644)
			os.Remove(tmp)
			b.StartTimer()
			if err := w.WorkingDiff(ctx, io.Discard, head, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("git", func(b *testing.B) {
		g := git{dir: w.Path}
		for range b.N {
			if _, err := g.run(ctx, "diff", "--stat", head); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCommitInRepo20000Files is a turn's commit of a worker that
// changed one file of the 20,000 (zwarm-ms/op: the worker's repository's
// commit, fetched into yours and kept), beside git add -A and git commit
// of the same change in a linked worktree of your repository (git-ms/op),
// and the ratio of the two (x-git).
func BenchmarkCommitInRepo20000Files(b *testing.B) {
	repo, head := benchRepo20000(b)
	ctx := context.Background()
	root := filepath.Join(b.TempDir(), "wt")
	touch := func(b *testing.B, dir string, i int) {
		f, err := os.OpenFile(filepath.Join(dir, "pkg001", "sub0", "file00050.go"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(f, "// turn %d\n", i)
		f.Close()
	}
	w := &Worktree{Path: filepath.Join(root, "3f2a9c1d-0000-4000-8000-000000000001"), CommonDir: filepath.Join(repo, ".git"), Branch: BranchFor("3f2a9c1d-0000-4000-8000-000000000001")}
	if err := w.Add(ctx, head); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(root, "git")
	if _, err := (git{dir: repo, writes: true}).run(ctx, "worktree", "add", "--quiet", "-b", "plain", path, head); err != nil {
		b.Fatal(err)
	}
	// Each turn is committed both ways in a row, so that what the machine
	// is doing meanwhile weighs on both alike; the ratio is per run. The
	// repository is made once: b.Run calls its function again for a
	// larger b.N.
	g := git{dir: path, writes: true, zwarm: true}
	turn := 0
	b.Run("turns", func(b *testing.B) {
		var mine, gits time.Duration
		for range b.N {
			turn++
			b.StopTimer()
			touch(b, w.Path, turn)
			touch(b, path, turn)
			b.StartTimer()
			began := time.Now()
			if _, made, err := w.Commit(ctx, fmt.Sprintf("zwarm turn %d", turn)); err != nil || !made {
				b.Fatal(err, made)
			}
			mine += time.Since(began)
			began = time.Now()
			if _, err := g.run(ctx, "add", "-A"); err != nil {
				b.Fatal(err)
			}
			if _, err := g.run(ctx, "commit", "--quiet", "-m", fmt.Sprintf("turn %d", turn)); err != nil {
				b.Fatal(err)
			}
			gits += time.Since(began)
		}
		b.ReportMetric(float64(mine.Microseconds())/1000/float64(b.N), "zwarm-ms/op")
		b.ReportMetric(float64(gits.Microseconds())/1000/float64(b.N), "git-ms/op")
		b.ReportMetric(float64(mine)/float64(gits), "x-git")
	})
}

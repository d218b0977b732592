package sessions_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// The worktree benchmarks work on a repository of 20,000 source files in
// 400 directories (about 30 MB), one commit, as a mid-sized project has.

const benchRepoFiles = 20000

// benchRepo makes the repository in dir.
func benchRepo(b *testing.B, dir string) {
	b.Helper()
	body := strings.Repeat("// Package code is generated for the benchmark; each line is a realistic width.\n", 18)
	for i := range benchRepoFiles {
		path := filepath.Join(dir, fmt.Sprintf("pkg%03d", i/50), fmt.Sprintf("sub%d", i%5), fmt.Sprintf("file%05d.go", i))
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(fmt.Sprintf("package p%d\n\n%s", i/50, body)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// benchWorld is a world whose working dir is the benchmark repository,
// with git's user config out of the way.
func benchWorld(b *testing.B) *world { return benchWorldOf(b, benchRepo) }

// benchWorldOf is a world whose working dir is the repository makeRepo
// makes there, with git's user config out of the way.
func benchWorldOf(b *testing.B, makeRepo func(*testing.B, string)) *world {
	b.Helper()
	w := newWorld(b)
	home := b.TempDir()
	cfg := filepath.Join(home, "gitconfig")
	os.WriteFile(cfg, []byte("[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n"), 0o600)
	b.Setenv("GIT_CONFIG_GLOBAL", cfg)
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	b.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	makeRepo(b, w.Work)
	w.SetScript(fakeagent.Script{Default: append([]map[string]any{{"run": "sh " + filepath.Join(w.Store.Dir(), "agent.sh")}}, fakeagent.Completes("done", 700)...)})
	w.agent("true")
	return w
}

// BenchmarkSpawnInRepo20000Files: what spawn costs its caller in a large
// repository. It checks the repository and the base and records the
// session; the supervisor makes the worktree after spawn has returned
// (and is waited for, untimed, before the next spawn).
func BenchmarkSpawnInRepo20000Files(b *testing.B) {
	w := benchWorld(b)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		s, err := w.Manager.Spawn(ctx, sessions.SpawnRequest{Task: "add rate limiting", Adapter: "fake", WorkingDir: w.Work})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if s.Workspace == nil {
			b.Fatal("no worktree")
		}
		w.waitFor(s.ID, 5*60e9)
		if _, err := w.Manager.Remove(ctx, s.ID, true); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkDiffStatInRepo20000Files: zwarm diff --stat of a settled
// worker that changed 5 files of the 20,000, its worktree as it is (what
// it did not commit included, read through a copy of its index).
func BenchmarkDiffStatInRepo20000Files(b *testing.B) {
	w := benchWorld(b)
	w.agent(`for i in 1 2 3 4 5; do echo "// changed" >> $(printf 'pkg%03d/sub0/file%05d.go' $i $((i*50))); done`)
	ctx := context.Background()
	s, err := w.Manager.Spawn(ctx, sessions.SpawnRequest{Task: "change five files", Adapter: "fake", WorkingDir: w.Work})
	if err != nil {
		b.Fatal(err)
	}
	s = w.waitFor(s.ID, 5*60e9)
	if s.Status() != record.StatusCompleted || s.Workspace.Changes == nil || *s.Workspace.Changes != (workspace.Stat{Files: 5, Added: 5}) {
		b.Fatalf("worker: %s %s %+v", s.Status(), s.Error, s.Workspace.Changes)
	}
	opt := sessions.DiffRequest{Options: workspace.DiffOptions{Format: workspace.StatOnly}}
	b.ResetTimer()
	for range b.N {
		if _, err := w.Manager.Diff(ctx, s.ID, io.Discard, opt); err != nil {
			b.Fatal(err)
		}
	}
}

package tui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// Workers in real git repositories: a repository on branch main, and for
// each worker a linked worktree on its own branch with its change
// committed by zwarm, as the supervisor leaves it at a turn's end, made
// with the same workspace package. Diff and Land then run for real, git
// and all.

// gitIsolated keeps the user's git configuration out of the test.
func gitIsolated(t testing.TB) {
	t.Helper()
	home := t.TempDir()
	cfg := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	// Commits made at a fixed time have the same ids at every run.
	t.Setenv("GIT_AUTHOR_DATE", "2026-03-01T11:00:00Z")
	t.Setenv("GIT_COMMITTER_DATE", "2026-03-01T11:00:00Z")
}

// repo makes a repository on main with files committed.
func (f *fixture) repo(files map[string]string) string {
	f.t.Helper()
	gitIsolated(f.t)
	dir := filepath.Join(f.t.TempDir(), "work")
	writeFiles(f.t, dir, files)
	runGit(f.t, dir, "init", "-q")
	runGit(f.t, dir, "add", "-A")
	runGit(f.t, dir, "commit", "-q", "-m", "init")
	return dir
}

// worker adds session n, working in a worktree of repo whose agent wrote
// change (a path with no content is deleted), committed as turn 1.
func (f *fixture) worker(n int, status record.Status, task, repo string, change map[string]string, opts ...sessOpt) string {
	f.t.Helper()
	ctx := context.Background()
	id := fixtureID(n)
	base := runGit(f.t, repo, "rev-parse", "HEAD")
	w := &workspace.Worktree{Path: filepath.Join(os.Getenv("XDG_DATA_HOME"), "zwarm", "worktrees", id),
		CommonDir: filepath.Join(repo, ".git"), Branch: workspace.BranchFor(id)}
	if err := w.Add(ctx, base); err != nil {
		f.t.Fatal(err)
	}
	writeFiles(f.t, w.Path, change)
	head, _, err := w.Commit(ctx, fmt.Sprintf("zwarm %s turn 1: %s", record.ShortID(id), task))
	if err != nil {
		f.t.Fatal(err)
	}
	_, stat, err := w.Changes(ctx, base, head)
	if err != nil {
		f.t.Fatal(err)
	}
	ws := &record.Workspace{Repo: repo, GitDir: w.CommonDir, Origin: repo, Path: w.Path, Branch: w.Branch,
		Base: "main", BaseBranch: true, BaseCommit: base, State: record.WorkspaceReady, Head: head, Changes: &stat}
	return f.add(n, status, task, time.Hour, append([]sessOpt{func(s *record.Session) {
		s.Workspace, s.WorkingDir = ws, w.Path
		s.Turns[0].Commit = head
	}}, opts...)...)
}

func fixtureID(n int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", 0x3f2a0000+n, n) }

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if body == "" {
			os.Remove(path)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// numbered is a file of n numbered lines.
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

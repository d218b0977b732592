package workspace

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every test works on real repositories made in a temporary directory,
// with git's global and system config out of the way and an identity of
// the tests' own (a fresh machine has none). TestMain sets that up once
// for the whole binary, so that the tests may run in parallel: each has
// repositories of its own, and worktrees go under a name of their
// repository's.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "zwarm-workspace-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg := filepath.Join(home, "gitconfig")
	err = os.WriteFile(cfg, []byte("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o600)
	for k, v := range map[string]string{"GIT_CONFIG_GLOBAL": cfg, "GIT_CONFIG_NOSYSTEM": "1", "HOME": home,
		"XDG_DATA_HOME": filepath.Join(home, "data")} {
		if err == nil {
			err = os.Setenv(k, v)
		}
	}
	code := 1
	switch dir := os.Getenv("ZWARM_TEST_GIT_ADD"); {
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
	case dir != "":
		// A process that runs zwarm's git in a worktree and is killed
		// meanwhile (TestAGitWhoseZwarmDiesLeavesNoLock).
		g := (&Worktree{Path: dir, OwnDir: OwnRepoFor(dir)}).tree()
		g.writes, g.config = true, []string{"filter.slow.clean=sleep 2; cat"}
		_, err = g.run(context.Background(), "add", "-A")
		fmt.Fprintln(os.Stderr, err)
	default:
		code = m.Run()
	}
	os.RemoveAll(home)
	os.Exit(code)
}

// sh runs a shell command in dir and returns its output; it fails the
// test if the command fails.
func sh(t *testing.T, dir, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo makes a repository on branch main with one commit of the files.
func newRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "api")
	os.MkdirAll(dir, 0o755)
	sh(t, dir, "git init -q")
	for name, body := range files {
		write(t, filepath.Join(dir, name), body)
	}
	sh(t, dir, "git add -A && git commit -q -m init")
	return dir
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func find(t *testing.T, dir string) *Repo {
	t.Helper()
	r, err := Find(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newWorktree makes a worker's worktree of repo at its HEAD.
func newWorktree(t *testing.T, repo, id string) *Worktree {
	t.Helper()
	ctx := context.Background()
	r := find(t, repo)
	base, err := r.ResolveBase(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	w := &Worktree{Path: filepath.Join(r.WorktreesRoot(filepath.Join(t.TempDir(), "wt")), id), CommonDir: r.CommonDir, Branch: BranchFor(id)}
	if err := w.Add(ctx, base.Commit); err != nil {
		t.Fatal(err)
	}
	return w
}

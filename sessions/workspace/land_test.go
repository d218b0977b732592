package workspace

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// work makes the worker change a file and commits it as zwarm does.
func work(t *testing.T, w *Worktree, file, body string) string {
	t.Helper()
	write(t, filepath.Join(w.Path, file), body)
	head, made, err := w.Commit(context.Background(), "zwarm turn: "+file)
	if err != nil || !made {
		t.Fatalf("commit %s: %v %v", file, err, made)
	}
	return head
}

func TestSquashLandingIntoADirtyCheckoutKeepsItsUncommittedWork(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.go": "package a\n", "b.go": "package b\n", "notes.txt": "mine\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000010")
	head := work(t, w, "a.go", "package a\n\nvar Limit = 10\n")

	// The person edits another file, stages a third, and leaves an
	// untracked one, meanwhile.
	write(t, filepath.Join(repo, "b.go"), "package b // mine\n")
	write(t, filepath.Join(repo, "notes.txt"), "mine, staged\n")
	sh(t, repo, "git add notes.txt")
	write(t, filepath.Join(repo, "scratch.txt"), "untracked\n")
	status := sh(t, repo, "git status --porcelain")

	r := find(t, repo)
	branch, err := r.CurrentBranch(ctx)
	if err != nil || branch != "main" {
		t.Fatalf("current branch %q %v", branch, err)
	}
	target, err := FindTarget(ctx, r.CommonDir, branch)
	if err != nil || target.Checkout != repo {
		t.Fatalf("target %+v %v", target, err)
	}
	tree, err := MergeTree(ctx, r.CommonDir, target.Commit, head)
	if err != nil {
		t.Fatal(err)
	}
	commit, err := CommitTree(ctx, r.CommonDir, tree, "add a limit\n\nThe worker said: done.\n", target.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if hit, err := Overlap(ctx, repo, target.Commit, commit); err != nil || len(hit) != 0 {
		t.Fatalf("overlap %v %v", hit, err)
	}
	if err := Advance(ctx, r.CommonDir, target, commit, "zwarm land"); err != nil {
		t.Fatal(err)
	}
	if got := sh(t, repo, "git rev-parse HEAD"); got != commit {
		t.Fatalf("HEAD %s, want the landed %s", got, commit)
	}
	if read(t, filepath.Join(repo, "a.go")) != "package a\n\nvar Limit = 10\n" {
		t.Error("the landed change is not in the checkout")
	}
	if got := sh(t, repo, "git status --porcelain"); got != status {
		t.Errorf("status after landing %q, want the same uncommitted work %q", got, status)
	}
	if got := sh(t, repo, "git log -1 --format='%an|%s|%P'"); got != "Test User|add a limit|"+target.Commit {
		t.Errorf("landed commit %q: the user's, on top of the target", got)
	}
}

func TestLandingRefusesToOverwriteUncommittedChanges(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.go": "package a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000011")
	head := work(t, w, "a.go", "package a // worker\n")
	write(t, filepath.Join(repo, "a.go"), "package a // person\n")
	r := find(t, repo)
	target, _ := FindTarget(ctx, r.CommonDir, "main")
	tree, _ := MergeTree(ctx, r.CommonDir, target.Commit, head)
	commit, _ := CommitTree(ctx, r.CommonDir, tree, "x", target.Commit)
	hit, err := Overlap(ctx, repo, target.Commit, commit)
	if err != nil || !reflect.DeepEqual(hit, []string{"a.go"}) {
		t.Fatalf("overlap %v %v", hit, err)
	}
	// Even without the check, git refuses and nothing is lost.
	if err := Advance(ctx, r.CommonDir, target, commit, "zwarm land"); err == nil {
		t.Fatal("advanced over an uncommitted change")
	}
	if read(t, filepath.Join(repo, "a.go")) != "package a // person\n" || sh(t, repo, "git rev-parse HEAD") != target.Commit {
		t.Error("the person's change or HEAD was touched")
	}
}

func TestMergeTreeNamesTheConflictingFilesAndChangesNothing(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.go": "1\n2\n3\n", "b.go": "b\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000012")
	head := work(t, w, "a.go", "1\nworker\n3\n")
	sh(t, repo, "printf '1\\nperson\\n3\\n' > a.go && git commit -qam person")
	r := find(t, repo)
	target, _ := FindTarget(ctx, r.CommonDir, "main")
	before := sh(t, repo, "git for-each-ref && git status --porcelain")
	_, err := MergeTree(ctx, r.CommonDir, target.Commit, head)
	var ce *ConflictError
	if !errors.As(err, &ce) || !reflect.DeepEqual(ce.Files, []string{"a.go"}) {
		t.Fatalf("err %v, want a conflict in a.go", err)
	}
	if sh(t, repo, "git for-each-ref && git status --porcelain") != before {
		t.Error("a conflict check changed something")
	}
	// A rebase that conflicts is undone.
	if _, err := w.Rebase(ctx, target.Commit, sh(t, repo, "git rev-parse main~1")); !errors.As(err, &ce) {
		t.Fatalf("rebase: %v", err)
	}
	if sh(t, w.Path, "git status --porcelain") != "" || sh(t, w.Path, "git rev-parse HEAD") != head {
		t.Error("the conflicting rebase was not undone")
	}
}

func TestAdvanceRefusesABranchThatMoved(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.go": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000013")
	head := work(t, w, "b.go", "b\n")
	r := find(t, repo)
	sh(t, repo, "git branch other")
	for _, name := range []string{"main", "other"} {
		target, _ := FindTarget(ctx, r.CommonDir, name)
		tree, _ := MergeTree(ctx, r.CommonDir, target.Commit, head)
		commit, _ := CommitTree(ctx, r.CommonDir, tree, "x", target.Commit)
		// Someone commits to the branch in between.
		sh(t, repo, "git commit -q --allow-empty -m between && git branch -f other main")
		if err := Advance(ctx, r.CommonDir, target, commit, "zwarm land"); !errors.Is(err, ErrMoved) {
			t.Errorf("%s: %v, want ErrMoved", name, err)
		}
	}
	// A branch no worktree has checked out moves by its ref alone.
	target, _ := FindTarget(ctx, r.CommonDir, "other")
	if target.Checkout != "" {
		t.Fatalf("other is checked out at %s", target.Checkout)
	}
	tree, _ := MergeTree(ctx, r.CommonDir, target.Commit, head)
	commit, _ := CommitTree(ctx, r.CommonDir, tree, "x", target.Commit)
	if err := Advance(ctx, r.CommonDir, target, commit, "zwarm land"); err != nil || sh(t, repo, "git rev-parse other") != commit {
		t.Errorf("advance other: %v", err)
	}
}

func TestMergeFromLeavesAConflictForTheWorkerAndTheNextCommitConcludesIt(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.go": "1\n2\n3\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000014")
	work(t, w, "a.go", "1\nworker\n3\n")
	sh(t, repo, "printf '1\\nperson\\n3\\n' > a.go && git commit -qam person")
	main := sh(t, repo, "git rev-parse main")
	_, err := w.MergeFrom(ctx, "main", "zwarm: merge main")
	var ce *ConflictError
	if !errors.As(err, &ce) || !reflect.DeepEqual(ce.Files, []string{"a.go"}) {
		t.Fatalf("merge: %v", err)
	}
	if got := w.WithMarkers(ce.Files); !reflect.DeepEqual(got, []string{"a.go"}) {
		t.Fatalf("markers in %v", got)
	}
	// The worker resolves it.
	write(t, filepath.Join(w.Path, "a.go"), "1\nworker and person\n3\n")
	if w.WithMarkers(ce.Files) != nil {
		t.Fatal("markers found in a resolved file")
	}
	head, made, err := w.Commit(ctx, "zwarm turn 2")
	if err != nil || !made {
		t.Fatal(err, made)
	}
	if parents := sh(t, w.Path, "git log -1 --format=%P"); !strings.Contains(parents, main) {
		t.Errorf("the commit %s did not conclude the merge: parents %s", head, parents)
	}
	if !IsAncestor(ctx, w.CommonDir, main, head) {
		t.Error("main is not in the worker's branch")
	}
	if _, err := MergeTree(ctx, w.CommonDir, main, head); err != nil {
		t.Errorf("landing after the update still conflicts: %v", err)
	}

	// A merge with no conflict commits at once.
	sh(t, repo, "echo c > c.go && git add c.go && git commit -qm c")
	h2, err := w.MergeFrom(ctx, "main", "zwarm: merge main")
	if err != nil || !IsAncestor(ctx, w.CommonDir, sh(t, repo, "git rev-parse main"), h2) {
		t.Errorf("clean merge: %v", err)
	}
}

func TestLeftoversAreWorktreesWhoseSessionIsGone(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a": "1\n"})
	ctx := context.Background()
	live := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000020")
	gone := &Worktree{Path: filepath.Join(filepath.Dir(live.Path), "3f2a9c1d-0000-4000-8000-000000000021"), CommonDir: live.CommonDir, Branch: BranchFor("3f2a9c1d-0000-4000-8000-000000000021")}
	if err := gone.Add(ctx, sh(t, repo, "git rev-parse HEAD")); err != nil {
		t.Fatal(err)
	}
	write(t, OwnerFile(gone.Path), "/srv/state\n") // as zwarm writes it, before it makes one
	os.Chmod(OwnerFile(gone.Path), 0o600)
	write(t, filepath.Join(gone.Path, "big.bin"), strings.Repeat("x", 64<<10))
	// A directory git forgot about, beside the owner file zwarm wrote.
	forgotten := filepath.Join(filepath.Dir(live.Path), "3f2a9c1d-0000-4000-8000-000000000022")
	write(t, filepath.Join(forgotten, "f"), "x")
	write(t, OwnerFile(forgotten), "/srv/state\n")
	os.Chmod(OwnerFile(forgotten), 0o600)
	// Directories of yours there: one named as a session is, without the
	// owner file zwarm writes before it makes a worktree; one named by a
	// date, which is hex digits and hyphens too; a repository of yours.
	for _, name := range []string{"3f2a9c1d-0000-4000-8000-000000000097", "2024-11-30", "3f2a9c1d-0000-4000-8000-000000000096.git"} {
		write(t, filepath.Join(filepath.Dir(live.Path), name, "notes"), "mine\n")
	}
	// Something else in the root that is not zwarm's.
	os.MkdirAll(filepath.Join(filepath.Dir(live.Path), "notes"), 0o700)
	// Checkouts of yours on branches named zwarm/...: your repository's
	// own (git lists it first), and worktrees of yours elsewhere, one
	// even named as a session is. clean --worktrees deleted them all.
	sh(t, repo, "git checkout -q -b zwarm/3f2a9c1d-0000-4000-8000-000000000099")
	mine := t.TempDir()
	sh(t, repo, "git worktree add -q "+filepath.Join(mine, "review")+" -b zwarm/review")
	sh(t, repo, "git worktree add -q "+filepath.Join(mine, "3f2a9c1d-0000-4000-8000-000000000098")+" -b zwarm/3f2a9c1d-0000-4000-8000-000000000098")

	known := func(id, _ string) bool { return id == "3f2a9c1d-0000-4000-8000-000000000020" }
	left, err := Leftovers(ctx, live.CommonDir, filepath.Dir(live.Path), known)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 2 || left[0].Path != gone.Path || !left[0].Registered || left[0].Own != gone.OwnDir || left[0].Branch != gone.Branch || left[0].Bytes < 64<<10 ||
		left[1].Path != forgotten || left[1].Registered || left[1].Branch != "" {
		t.Fatalf("leftovers %+v", left)
	}
}

// A commit on the branch after Advance has looked and before git moves
// it (git's merge sees it) is the branch having moved, said as such:
// nothing was changed, land again.
func TestAdvanceRefusesABranchThatMovesUnderGit(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.go": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000014")
	head := work(t, w, "b.go", "b\n")
	r := find(t, repo)
	target, _ := FindTarget(ctx, r.CommonDir, "main")
	tree, _ := MergeTree(ctx, r.CommonDir, target.Commit, head)
	commit, _ := CommitTree(ctx, r.CommonDir, tree, "x", target.Commit)
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	// git as it is, but for a person's commit in the checkout the moment
	// before the fast-forward.
	bin := t.TempDir()
	write(t, filepath.Join(bin, "git"), "#!/bin/sh\ncase \" $* \" in *\" --ff-only \"*) '"+real+"' -C '"+repo+
		"' -c user.name=p -c user.email=p@x commit -q --allow-empty -m between ;; esac\nexec '"+real+"' \"$@\"\n")
	os.Chmod(filepath.Join(bin, "git"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err := Advance(ctx, r.CommonDir, target, commit, "zwarm land"); !errors.Is(err, ErrMoved) {
		t.Fatalf("a commit between the look and git's merge: %v, want ErrMoved", err)
	}
	if got := sh(t, repo, "git log -1 --format=%s main"); got != "between" {
		t.Fatalf("main is at %q, want the person's commit", got)
	}
}

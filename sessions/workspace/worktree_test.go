package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/store"
)

func TestAWorkersChangesAreCommittedWithoutWhatWasBroughtAlong(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"main.go": "package main\n", "README": "hello\n", ".gitignore": ".env\nnode_modules/\n"})
	write(t, filepath.Join(repo, ".env"), "TOKEN=secret\n")
	write(t, filepath.Join(repo, "node_modules", "left-pad", "index.js"), "module.exports = 1\n")
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000001")
	base := sh(t, w.Path, "git rev-parse HEAD")
	if got := sh(t, w.Path, "git symbolic-ref --short HEAD"); got != "zwarm/3f2a9c1d-0000-4000-8000-000000000001" {
		t.Fatalf("worktree on %s", got)
	}
	if perm := mode(t, filepath.Dir(w.Path)); perm != 0o700 {
		t.Errorf("the worktrees dir is %o, want 700", perm)
	}

	brought, log, err := w.Bring(context.Background(), repo, []string{".env", "missing.txt", "README"}, []string{"node_modules"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(brought, []string{".env", "node_modules"}) {
		t.Fatalf("brought %v (log %q)", brought, log)
	}
	if !strings.Contains(strings.Join(log, "\n"), "missing.txt: not in") || !strings.Contains(strings.Join(log, "\n"), "README: the worktree has it already") {
		t.Errorf("log %q", log)
	}
	if read(t, filepath.Join(w.Path, ".env")) != "TOKEN=secret\n" {
		t.Error(".env not copied")
	}
	if target, err := os.Readlink(filepath.Join(w.Path, "node_modules")); err != nil || target != filepath.Join(repo, "node_modules") {
		t.Errorf("node_modules link %q %v", target, err)
	}
	w.Exclude = brought

	// The worker edits, adds, deletes, and also touches what was brought.
	write(t, filepath.Join(w.Path, "main.go"), "package main\n\nfunc main() {}\n")
	write(t, filepath.Join(w.Path, "limit", "limit.go"), "package limit\n")
	os.Remove(filepath.Join(w.Path, "README"))
	write(t, filepath.Join(w.Path, ".env"), "TOKEN=changed\n")
	head, made, err := w.Commit(ctx, "zwarm 3f2a9c1d turn 1: add rate limiting")
	if err != nil || !made {
		t.Fatalf("commit: %v made=%v", err, made)
	}
	if got := sh(t, w.Path, "git log -1 --format='%an <%ae>|%cn|%s'"); got != "zwarm <zwarm@localhost>|zwarm|zwarm 3f2a9c1d turn 1: add rate limiting" {
		t.Errorf("commit %q", got)
	}
	if got := sh(t, w.Path, "git show --name-status --format= HEAD"); got != "D\tREADME\nA\tlimit/limit.go\nM\tmain.go" {
		t.Errorf("committed %q: what was brought along must stay out", got)
	}
	files, stat, err := w.Changes(ctx, base, head)
	if err != nil {
		t.Fatal(err)
	}
	if stat != (Stat{Files: 3, Added: 3, Deleted: 1}) || stat.String() != "+3 -1 in 3 files" || len(files) != 3 {
		t.Errorf("changes %+v %v", stat, files)
	}
	if n, err := w.Count(ctx, base, head); err != nil || n != 1 {
		t.Errorf("count %d %v", n, err)
	}

	// Nothing new: no commit.
	if h2, made, err := w.Commit(ctx, "turn 2"); err != nil || made || h2 != head {
		t.Errorf("second commit: %s %v %v", h2, made, err)
	}
	// A worker's own commit stays as it is.
	sh(t, w.Path, "echo more >> main.go && git -c user.name=Agent -c user.email=a@x commit -qam 'agent commit'")
	if h3, made, err := w.Commit(ctx, "turn 3"); err != nil || made || h3 == head {
		t.Errorf("after the worker's own commit: %s %v %v", h3, made, err)
	}

	if err := w.Remove(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(w.Path); !os.IsNotExist(err) {
		t.Error("worktree directory still there")
	}
	if out := sh(t, repo, "git branch --list 'zwarm/*'"); out != "" {
		t.Errorf("branch left: %q", out)
	}
	if read(t, filepath.Join(repo, ".env")) != "TOKEN=secret\n" || !exists(filepath.Join(repo, "node_modules", "left-pad", "index.js")) {
		t.Error("removing the worktree touched what was brought from the checkout")
	}
	if err := w.Remove(ctx, false); err != nil {
		t.Errorf("a second removal: %v", err)
	}
}

func TestBringRefusesPathsOutsideTheCheckout(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a": "1\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000002")
	for _, bad := range []string{"/etc/passwd", "../x", ".git/config", ""} {
		if _, _, err := w.Bring(context.Background(), repo, []string{bad}, nil); err == nil {
			t.Errorf("copy %q: no error", bad)
		}
	}
}

func TestWritableGitDirsAreTheWorktreesOwnAndNotHooksOrConfigOrOtherBranches(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a": "1\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000003")
	got := w.WritableGitDirs()
	// The worker's own repository's, none of yours.
	gd := OwnRepoFor(w.Path)
	if w.OwnDir != gd {
		t.Fatalf("the worktree's repository is %q, want its own %s", w.OwnDir, gd)
	}
	want := []string{filepath.Join(gd, "worktrees", "3f2a9c1d-0000-4000-8000-000000000003"), filepath.Join(gd, "objects"),
		filepath.Join(gd, "refs", "heads", "zwarm"), filepath.Join(gd, "logs", "refs", "heads", "zwarm")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%v\nwant %v", got, want)
	}
	// gc packs the branch's ref and removes its dir; the next turn's
	// roots have it again, so the worker can still commit.
	sh(t, w.Path, "git pack-refs --all")
	if _, err := os.Stat(filepath.Join(gd, "refs", "heads", "zwarm")); err == nil {
		t.Fatal("pack-refs left refs/heads/zwarm: the test shows nothing")
	}
	if got := w.WritableGitDirs(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after pack-refs: %v\nwant %v", got, want)
	}
}

func TestWorkingDiffSeesUncommittedWorkAndLeavesTheWorkersIndexAlone(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.go": "package a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000004")
	base := sh(t, w.Path, "git rev-parse HEAD")
	write(t, filepath.Join(w.Path, "a.go"), "package a\n\nvar X = 1\n")
	write(t, filepath.Join(w.Path, "new.go"), "package a\n")
	index := read(t, w.admin()+"/index")

	var out bytes.Buffer
	if err := w.WorkingDiff(ctx, &out, base, DiffOptions{Format: NamesOnly}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "a.go\nnew.go\n" {
		t.Errorf("names %q", out.String())
	}
	out.Reset()
	if err := w.WorkingDiff(ctx, &out, base, DiffOptions{}); err != nil || !strings.Contains(out.String(), "+var X = 1") || strings.Contains(out.String(), "\x1b[") {
		t.Errorf("patch %q %v", out.String(), err)
	}
	if _, stat, err := w.WorkingChanges(ctx, base); err != nil || stat != (Stat{Files: 2, Added: 3, Deleted: 0}) {
		t.Errorf("working changes %+v %v", stat, err)
	}
	if read(t, w.admin()+"/index") != index || sh(t, w.Path, "git status --porcelain") != "M a.go\n?? new.go" && sh(t, w.Path, "git status --porcelain") != " M a.go\n?? new.go" {
		t.Errorf("the worker's index or status changed: %q", sh(t, w.Path, "git status --porcelain"))
	}
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// Worktrees added and removed at once in one repository (workers spawned
// together) all succeed: zwarm serializes its changes to them.
func TestWorktreesAddedAtOnceAllSucceed(t *testing.T) {
	t.Parallel()
	addAtOnce(t)
}

// The same with the lock of the repository's worktrees a lease lock, as
// where the worktrees directory is on a network file system.
func TestWorktreesAddedAtOnceUnderLeaseLocksAllSucceed(t *testing.T) {
	t.Setenv(store.LocksEnv, string(store.SchemeLease))
	addAtOnce(t)
}

func addAtOnce(t *testing.T) {
	repo := newRepo(t, map[string]string{"a": "a\n"})
	ctx := context.Background()
	r := find(t, repo)
	head := sh(t, repo, "git rev-parse HEAD")
	root := r.WorktreesRoot(filepath.Join(t.TempDir(), "wt"))
	const n = 12
	errs := make(chan error, n)
	for i := range n {
		go func() {
			id := "3f2a9c1d-0000-4000-8000-0000000001" + string(rune('a'+i/10)) + string(rune('0'+i%10))
			w := &Worktree{Path: filepath.Join(root, id), CommonDir: r.CommonDir, Branch: BranchFor(id)}
			err := w.Add(ctx, head)
			if err == nil {
				err = w.Remove(ctx, false)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if out := sh(t, repo, "git worktree list | wc -l"); out != "1" {
		t.Errorf("worktrees left: %s", out)
	}
}

// What is brought into a worktree never comes from outside the repository
// through a symlinked directory, and is never written outside the
// worktree through one: the entry is refused, naming the symlink.
func TestBringFollowsNoSymlinkedDirectory(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret.txt"), "secret\n")
	repo := newRepo(t, map[string]string{"a": "1\n", ".gitignore": "evil\ncfg/.env\n"})
	if err := os.Symlink(outside, filepath.Join(repo, "evil")); err != nil {
		t.Fatal(err)
	}
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000010")
	ctx := context.Background()
	for _, c := range []struct{ copies, links []string }{
		{copies: []string{"evil/secret.txt"}},
		{copies: []string{"*/secret.txt"}},
		{links: []string{"evil/secret.txt"}},
	} {
		brought, _, err := w.Bring(ctx, repo, c.copies, c.links)
		if err == nil || !strings.Contains(err.Error(), "evil in "+repo+" is a symlink (to "+outside+")") {
			t.Errorf("bring %v %v: brought %v, err %v", c.copies, c.links, brought, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(w.Path, "evil")); err == nil {
		t.Error("something was brought through the symlink")
	}
	// The entry itself may be a symlink: it is brought as one.
	if brought, _, err := w.Bring(ctx, repo, []string{"evil"}, nil); err != nil || len(brought) != 1 {
		t.Errorf("a symlink itself: %v %v", brought, err)
	}

	// A symlinked directory committed in the worktree, a real one in the
	// checkout: nothing is written through it.
	repo2 := newRepo(t, map[string]string{"a": "1\n", ".gitignore": ".env\n"})
	sh(t, repo2, "ln -s "+outside+" cfg && git add cfg && git commit -q -m link && rm cfg")
	write(t, filepath.Join(repo2, "cfg", ".env"), "TOKEN=1\n")
	w2 := newWorktree(t, repo2, "3f2a9c1d-0000-4000-8000-000000000011")
	_, _, err := w2.Bring(ctx, repo2, []string{"cfg/.env"}, nil)
	if err == nil || !strings.Contains(err.Error(), "cfg in the worktree is a symlink (to "+outside+")") {
		t.Errorf("bring through the worktree's symlink: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(outside, ".env")); err == nil {
		t.Error("a file was written outside the worktree")
	}

	// A record that names something beyond a symlinked directory (the
	// worker replaced a brought directory by a symlink) leaves nothing
	// out, and the worktree's work is still committed and diffed.
	w2.Exclude = []string{"cfg/.env"}
	write(t, filepath.Join(w2.Path, "b"), "2\n")
	head, made, err := w2.Commit(ctx, "turn 1")
	if err != nil || !made {
		t.Fatalf("commit with an exclusion beyond a symlink: %v", err)
	}
	if _, _, err := w2.Changes(ctx, sh(t, repo2, "git rev-parse HEAD"), head); err != nil {
		t.Errorf("changes: %v", err)
	}
	if u := w2.Untracked(ctx, []string{"cfg/.env", "cfg/*"}); len(u) != 0 {
		t.Errorf("untracked beyond a symlink: %v", u)
	}
}

// A .worktreeinclude line naming something outside the checkout is an
// error naming the file and the line, not a [worktrees] setting.
func TestAWorktreeIncludeLineOutsideTheCheckoutIsAnError(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a": "1\n", ".worktreeinclude": "# brought along\n.env\n../x\n"})
	_, err := ReadIncludeFile(repo)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(repo, ".worktreeinclude")+" line 3: \"../x\" must stay inside the repository") {
		t.Errorf("read: %v", err)
	}
	write(t, filepath.Join(repo, ".worktreeinclude"), "/.env\nconfig/\n")
	if got, err := ReadIncludeFile(repo); err != nil || !reflect.DeepEqual(got, []string{".env", "config"}) {
		t.Errorf("read %v %v", got, err)
	}
}

// The turn's commit stages what git add -A of the whole worktree would
// (the state dir aside), though it walks the worktree once: files changed,
// deleted, made executable, turned into a directory or a symlink, new in
// new directories, with odd names, a tracked file an ignore rule matches
// (the worker's git add -f) changed again; not an ignored new file, nor a
// state dir below a new directory.
func TestTheTurnsCommitStagesWhatAddAllWould(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n", "gone.txt": "g\n", "run.sh": "echo\n", "becomes-dir": "f\n",
		"becomes-link": "l\n", ".gitignore": "*.log\nnotes\n", "keep/x.txt": "x\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000050")
	sh(t, w.Path, `mkdir -p notes && echo t > notes/todo.md && git add -f notes/todo.md && git -c user.name=W -c user.email=w@x commit -qm notes`)
	sh(t, w.Path, `echo changed >> a.txt && rm gone.txt && chmod +x run.sh && rm becomes-dir && mkdir becomes-dir && echo in > becomes-dir/in.txt &&
rm becomes-link && ln -s keep becomes-link && mkdir -p new/deep && echo n > new/deep/n.txt && printf 'odd' > 'odd name
with newline.txt' &&
echo more >> notes/todo.md && echo debug > debug.log && mkdir -p new/.zwarm && echo s > new/.zwarm/config.toml &&
echo staged > staged.txt && git add staged.txt && echo again >> staged.txt`)
	idx := filepath.Join(t.TempDir(), "index")
	want := sh(t, w.Path, `cp "$(git rev-parse --git-path index)" `+idx+` && GIT_INDEX_FILE=`+idx+
		` git add -A -- :/ ':(top,exclude,glob)**/.zwarm' ':(top,exclude,glob)**/.zwarm/**' && GIT_INDEX_FILE=`+idx+` git write-tree`)
	if _, made, err := w.Commit(ctx, "zwarm turn"); err != nil || !made {
		t.Fatalf("commit: %v %v", err, made)
	}
	if got := sh(t, w.Path, "git rev-parse HEAD^{tree}"); got != want {
		t.Fatalf("the turn's commit holds\n%s\nwant what git add -A stages\n%s", sh(t, w.Path, "git ls-tree -r HEAD"), sh(t, w.Path, "git ls-tree -r "+want))
	}
	if st := sh(t, w.Path, "git status --porcelain --untracked-files=all"); st != "?? new/.zwarm/config.toml" {
		t.Fatalf("left after the commit: %q (want only the state dir)", st)
	}
}

// Many zwarm processes taking the worker's branch into your repository at
// once (diffs while the turn's commit is made): each gets the commit, kept,
// and zwarm/<id> ends at it.
func TestFollowingTheWorkersBranchConcurrently(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000051")
	sh(t, w.Path, "echo b > b.txt && git add b.txt && git -c user.name=W -c user.email=w@x commit -qm b")
	tip := sh(t, w.Path, "git rev-parse HEAD")
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			c := &Worktree{Path: w.Path, CommonDir: w.CommonDir, OwnDir: w.OwnDir, Branch: w.Branch, AdminDir: w.AdminDir}
			if got := c.Tip(ctx); got != tip {
				errs <- fmt.Errorf("Tip %q, want %s", got, tip)
				return
			}
			errs <- c.Follow(ctx)
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if got := sh(t, repo, "git rev-parse "+w.Branch); got != tip {
		t.Fatalf("%s in your repository: %s, want %s", w.Branch, got, tip)
	}
	if got := sh(t, repo, "git for-each-ref '--format=%(objectname)' refs/zwarm/"); !strings.Contains(got, tip) {
		t.Fatalf("the commit is not kept: %q", got)
	}
}

// TipNear answers as Tip does whatever it is told is likely: the tip,
// taken into your repository with zwarm/<id> there following it, when the
// guess is right and already followed, right and not followed (your branch
// deleted), or stale (the worker's branch moved on).
func TestTipNearIsTipWhateverItGuesses(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000052")
	commit := func(name string) string {
		sh(t, w.Path, "echo x > "+name+" && git add "+name+" && git -c user.name=W -c user.email=w@x commit -qm "+name)
		return sh(t, w.Path, "git rev-parse HEAD")
	}
	check := func(what, likely, want string) {
		t.Helper()
		if got := w.TipNear(ctx, likely); got != want {
			t.Fatalf("%s: TipNear %q, want %s", what, got, want)
		}
		if got := sh(t, repo, "git rev-parse "+w.Branch); got != want {
			t.Fatalf("%s: %s in your repository at %s, want %s", what, w.Branch, got, want)
		}
		if got := sh(t, repo, "git for-each-ref '--format=%(objectname)' refs/zwarm/"); !strings.Contains(got, want) {
			t.Fatalf("%s: the commit is not kept: %q", what, got)
		}
	}
	t1 := commit("b.txt")
	check("a right guess, not yet followed", t1, t1)
	check("a right guess, followed", t1, t1)
	sh(t, repo, "git branch -D -q "+w.Branch)
	check("a right guess, your branch deleted", t1, t1)
	t2 := commit("c.txt")
	check("a stale guess", t1, t2)
	check("no guess", "", t2)
	sh(t, w.Path, "git symbolic-ref refs/heads/"+w.Branch+" refs/heads/elsewhere")
	if got := w.TipNear(ctx, t2); got != "" {
		t.Fatalf("a branch made a symbolic ref: TipNear %q, want none", got)
	}
}

// A file made the moment after a turn's commit, in a directory the worker
// has, is in the next diff and the next commit; one deleted is gone from
// both (a copy of the index dated now once hid such a file).
func TestAFileMadeRightAfterACommitIsSeen(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"pkg/a.go": "package a\n", "pkg/sub/b.go": "package sub\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000060")
	base := sh(t, w.Path, "git rev-parse HEAD")
	names := func() string {
		t.Helper()
		files, _, err := w.WorkingChanges(ctx, base)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range files {
			out = append(out, f.Path)
		}
		return strings.Join(out, " ")
	}
	write(t, filepath.Join(w.Path, "pkg", "sub", "c.go"), "package sub\n")
	if _, made, err := w.Commit(ctx, "turn 1"); err != nil || !made {
		t.Fatalf("commit: %v %v", err, made)
	}
	for i := range 5 {
		name := fmt.Sprintf("n%d.go", i)
		write(t, filepath.Join(w.Path, "pkg", "sub", name), "package sub\n")
		if got := names(); !strings.Contains(got, "pkg/sub/"+name) {
			t.Fatalf("made %s; the diff lists %q", name, got)
		}
		os.Remove(filepath.Join(w.Path, "pkg", "sub", name))
		if got := names(); strings.Contains(got, name) {
			t.Fatalf("deleted %s; the diff lists %q", name, got)
		}
	}
	write(t, filepath.Join(w.Path, "pkg", "d.go"), "package a\n")
	head, made, err := w.Commit(ctx, "turn 2")
	if err != nil || !made {
		t.Fatalf("commit: %v %v", err, made)
	}
	if got := sh(t, w.Path, "git show --name-only --format= "+head); got != "pkg/d.go" {
		t.Fatalf("the second turn's commit holds %q, want pkg/d.go", got)
	}
}

// An untracked directory that holds only what is not the worker's (a file
// brought along, a state dir) is none of setup's, and the worker's files
// made there later are its change: committed, and counted as uncommitted
// until they are.
func TestADirectoryHoldingOnlyWhatWasBroughtIsNotTakenWhole(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000062")
	write(t, filepath.Join(w.Path, "certs", "dev.pem"), "brought\n")
	write(t, filepath.Join(w.Path, "sub", ".zwarm", "state"), "zwarm's\n")
	w.Exclude = []string{"certs/dev.pem"}
	if untracked, changed, err := w.SetupMade(ctx); err != nil || len(untracked)+len(changed) != 0 {
		t.Fatalf("SetupMade = %q %q %v; want nothing: the brought file and the state dir are not setup's", untracked, changed, err)
	}
	if dirty, err := w.Dirty(ctx); err != nil || len(dirty) != 0 {
		t.Fatalf("Dirty = %q %v; want nothing uncommitted", dirty, err)
	}
	write(t, filepath.Join(w.Path, "certs", "README.md"), "how to make one\n")
	write(t, filepath.Join(w.Path, "sub", "new.go"), "package sub\n")
	// git names an untracked directory whole, the brought file in it or not.
	if dirty, err := w.Dirty(ctx); err != nil || strings.Join(dirty, " ") != "certs/ sub/" {
		t.Fatalf("Dirty = %q %v; want the directories of the worker's new files", dirty, err)
	}
	head, made, err := w.Commit(ctx, "turn")
	if err != nil || !made {
		t.Fatalf("commit: %v %v", err, made)
	}
	if got := sh(t, w.Path, "git show --name-only --format= "+head); got != "certs/README.md\nsub/new.go" {
		t.Fatalf("the turn's commit holds %q, want the worker's two files alone", got)
	}
	if dirty, err := w.Dirty(ctx); err != nil || len(dirty) != 0 {
		t.Fatalf("Dirty after the commit = %q %v", dirty, err)
	}
}

func TestIndexEntriesReadsTheIndexHeader(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n", "b/c.txt": "c\n", "b/d.txt": "d\n"})
	if got := indexEntries(filepath.Join(repo, ".git", "index")); got != 3 {
		t.Fatalf("indexEntries = %d, want 3", got)
	}
	if got := indexEntries(filepath.Join(repo, "a.txt")); got != 0 {
		t.Fatalf("indexEntries of a file that is no index = %d, want 0", got)
	}
}

// A repository of the worker's own deeper inside a new directory
// (app/lib/.git) is refused as one right below the top is: git add of
// app/ would stage it as a link to a commit that exists only there.
func TestARepositoryDeepInANewDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000063")
	write(t, filepath.Join(w.Path, "app", "main.go"), "package main\n")
	write(t, filepath.Join(w.Path, "app", "lib", "lib.go"), "package lib\n")
	sh(t, filepath.Join(w.Path, "app", "lib"), "git init -q && git add lib.go && git -c user.name=A -c user.email=a@x commit -qm lib")
	_, _, err := w.Commit(ctx, "turn")
	var nested *NestedRepoError
	if !errors.As(err, &nested) || strings.Join(nested.Dirs, " ") != "app/lib/" {
		t.Fatalf("commit: %v; want app/lib/ refused as a repository of its own", err)
	}
	if got := sh(t, w.Path, "git log --oneline | wc -l"); got != "1" {
		t.Fatalf("%s commits on the worker's branch, want the base alone: nothing staged", got)
	}
}

// What setup made beside a file brought along in a new directory
// (config/dev.pem brought, config/gen.json made) is setup's, file by file:
// the worker's file made there later (config/new.yaml) is its change.
func TestSetupsFilesBesideABroughtFileAreTakenOneByOne(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000064")
	write(t, filepath.Join(w.Path, "config", "dev.pem"), "brought\n")
	w.Exclude = []string{"config/dev.pem"}
	write(t, filepath.Join(w.Path, "config", "gen.json"), "{}\n")
	untracked, _, err := w.SetupMade(ctx)
	if err != nil || strings.Join(untracked, " ") != "config/gen.json" {
		t.Fatalf("SetupMade = %q %v; want config/gen.json alone", untracked, err)
	}
	w.Exclude = append(w.Exclude, untracked...)
	write(t, filepath.Join(w.Path, "config", "new.yaml"), "worker: true\n")
	head, made, err := w.Commit(ctx, "turn")
	if err != nil || !made {
		t.Fatalf("commit: %v %v", err, made)
	}
	if got := sh(t, w.Path, "git show --name-only --format= "+head); got != "config/new.yaml" {
		t.Fatalf("the turn's commit holds %q, want the worker's config/new.yaml alone", got)
	}
}

// A worker that makes a tracked directory a symlink (to its own copy)
// has the turn committed all the same: the files beyond the link are
// gone, as git sees them, and the link is new.
func TestATrackedDirectoryMadeASymlinkIsCommitted(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.go": "package a\n", "pkg/p.go": "package p\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-00000000a006")
	sh(t, w.Path, "mkdir other && echo o > other/o.go && rm -r pkg && ln -s other pkg")
	head, made, err := w.Commit(context.Background(), "turn")
	if err != nil || !made {
		t.Fatalf("commit: %v (made %v)", err, made)
	}
	if got := sh(t, w.Path, "git ls-tree -r --format='%(objectmode) %(path)' "+head); got != "100644 a.go\n100644 other/o.go\n120000 pkg" {
		t.Errorf("committed:\n%s", got)
	}
}

// A worker that makes a tracked file under an ignored directory a
// directory has the turn committed: the file is gone, and what the new
// directory holds is ignored, as the directory above it is.
func TestATrackedFileUnderAnIgnoredDirectoryMadeADirectoryIsCommitted(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.go": "package a\n", ".gitignore": "build/\n"})
	sh(t, repo, "mkdir -p build && echo x > build/x && git add -f build/x && git commit -qm forced")
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-00000000a007")
	sh(t, w.Path, "rm build/x && mkdir build/x && echo y > build/x/y")
	head, made, err := w.Commit(context.Background(), "turn")
	if err != nil || !made {
		t.Fatalf("commit: %v (made %v)", err, made)
	}
	if got := sh(t, w.Path, "git ls-tree -r --name-only "+head); got != ".gitignore\na.go" {
		t.Errorf("committed:\n%s", got)
	}
}

// What a worker makes in a directory is committed and diffed whatever the
// directory's name: git (2.39) reads a pathspec's exclusion from the
// offset of the other paths' common directory, so that an exclusion for
// the state dir matched every file of one new in pkg/util/ or internal/,
// and past its end, what memory held. Nothing named to git literally goes
// with an exclusion now; what is left out is left out by zwarm.
func TestNewFilesAreCommittedAndDiffedWhateverTheirDirectory(t *testing.T) {
	t.Parallel()
	for i, dir := range []string{"a", "pkg/util", "internal", "sub/deep", "abcdefghi", "abcdefghijk", "ab/defgh/ijklm", "very/long/directory/name"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t, map[string]string{dir + "/f.go": "package f\n"})
			ctx := context.Background()
			w := newWorktree(t, repo, fmt.Sprintf("3f2a9c1d-0000-4000-8000-0000000001%02d", i))
			base := sh(t, w.Path, "git rev-parse HEAD")
			w.Exclude = []string{dir + "/made/brought.env"}
			sh(t, w.Path, "mkdir -p "+dir+"/made/.zwarm && echo n > "+dir+"/new.go && echo m > "+dir+"/made/m.go && echo b > "+dir+"/made/brought.env && echo s > "+dir+"/made/.zwarm/config.toml")
			want := dir + "/made/m.go\n" + dir + "/new.go"
			for _, how := range []string{"walking", "through the scan"} {
				var out bytes.Buffer
				if how == "through the scan" {
					remembered(t, w, base)
				}
				if err := w.WorkingDiff(ctx, &out, base, DiffOptions{Format: NamesOnly}); err != nil {
					t.Fatal(err)
				}
				if got := strings.TrimSpace(out.String()); got != want {
					t.Errorf("the diff %s names %q, want %q", how, got, want)
				}
			}
			head, made, err := w.Commit(ctx, "zwarm turn")
			if err != nil || !made {
				t.Fatalf("commit: %v %v", err, made)
			}
			if got := sh(t, w.Path, "git diff --name-only "+base+" "+head); got != want {
				t.Fatalf("the turn committed %q, want %q", got, want)
			}
		})
	}
}

// A worktrees dir reached through a symlink (a HOME that is a link, /tmp
// on macOS) makes worktrees as any other: git writes the worktree's git
// dir by its resolved name, which zwarm took for one outside the worker's
// repository, and refused every spawn.
func TestAWorktreesDirThroughASymlink(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a": "1\n"})
	ctx := context.Background()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	r := find(t, repo)
	id := "3f2a9c1d-0000-4000-8000-000000000050"
	w := &Worktree{Path: filepath.Join(link, id), CommonDir: r.CommonDir, Branch: BranchFor(id)}
	if err := w.Add(ctx, sh(t, repo, "git rev-parse HEAD")); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(link, id+".git", "worktrees", id); w.AdminDir != want {
		t.Fatalf("its git dir is recorded as %s, want %s", w.AdminDir, want)
	}
	if _, _, err := w.Commit(ctx, "zwarm turn"); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove(ctx, false); err != nil || w.Exists() {
		t.Fatalf("remove: %v, exists %v", err, w.Exists())
	}
}

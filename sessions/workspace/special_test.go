package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"golang.org/x/sys/unix"
)

// A FIFO the worker leaves where git opens a file by name (.gitattributes,
// a .gitignore below) would hold the turn's commit until its timeout, and
// every later command that reads the worktree for good; one in a tracked
// file's place makes git refuse the whole turn. None can be committed:
// the commit removes each, says so, and takes the rest of the turn's work.
func TestSpecialFilesTheWorkerLeavesAreRemovedBeforeTheCommit(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000090")
	w.Known = sh(t, repo, "git rev-parse main")
	write(t, filepath.Join(w.Path, "work.txt"), "the turn's work\n")
	for _, p := range []string{".gitattributes", "sub/.gitignore", "a.txt", "sub/deep/pipe"} {
		path := filepath.Join(w.Path, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.Remove(path)
		if err := unix.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	head, made, err := w.Commit(ctx, "zwarm turn")
	if err != nil || !made {
		t.Fatalf("commit: %v (made %v, waited %v)", err, made, ctx.Err() != nil)
	}
	if got := sh(t, repo, "git show --name-status --format= "+head); got != "D\ta.txt\nA\twork.txt" {
		t.Errorf("the turn's commit holds %q", got)
	}
	for _, p := range []string{".gitattributes", "sub/.gitignore", "a.txt", "sub/deep/pipe"} {
		if _, err := os.Lstat(filepath.Join(w.Path, p)); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	said := strings.Join(w.Undone, "\n")
	if !strings.Contains(said, "removed "+filepath.Join(w.Path, ".gitattributes")+" (a FIFO the worker left in its worktree") || strings.Count(said, "a FIFO the worker left") != 4 {
		t.Errorf("undone: %q", w.Undone)
	}
}

// A running worker's FIFO is its own until the turn ends: a diff of its
// worktree meanwhile gives up in a bounded time, naming what git waited
// on, and removes nothing.
func TestADiffOfARunningWorkerNeverWaitsOnItsFIFOForGood(t *testing.T) {
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000091")
	fifo := filepath.Join(w.Path, ".gitattributes")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Path, "work.txt"), "work\n")
	defer func(d time.Duration) { workingLimit = d }(workingLimit)
	workingLimit = 2 * time.Second
	start := time.Now()
	err := w.WorkingDiff(context.Background(), io.Discard, sh(t, repo, "git rev-parse main"), DiffOptions{})
	if err == nil || !strings.Contains(err.Error(), "the worker made "+fifo+", which git waits on") {
		t.Fatalf("diff: %v", err)
	}
	if took := time.Since(start); took > time.Minute {
		t.Fatalf("the diff took %s", took)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the running worker's FIFO was touched: %v", err)
	}
}

// A worker that makes its branch a directory of refs (zwarm/ID/x) leaves
// git unable to commit on the branch: the turn's commit removes the refs
// it made there, saying at which commits, makes the branch again where
// zwarm last knew it, and takes the turn's work.
func TestABranchMadeADirectoryOfRefsIsMadeABranchAgain(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000092")
	base := sh(t, repo, "git rev-parse main")
	w.Known = base
	branch := filepath.Join(w.OwnDir, "refs", "heads", filepath.FromSlash(w.Branch))
	if err := os.Remove(branch); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(branch, "x"), base+"\n")
	write(t, filepath.Join(w.Path, "work.txt"), "the turn's work\n")
	head, made, err := w.Commit(context.Background(), "zwarm turn")
	if err != nil || !made {
		t.Fatalf("commit: %v (made %v)", err, made)
	}
	if got := sh(t, repo, "git show --name-only --format= "+head); got != "work.txt" {
		t.Errorf("the turn's commit holds %q", got)
	}
	if got := sh(t, w.Path, "git rev-parse refs/heads/"+w.Branch); got != head {
		t.Errorf("the worker's branch is at %s, want the turn's commit %s", got, head)
	}
	said := strings.Join(w.Undone, "\n")
	if !strings.Contains(said, "removed refs/heads/"+w.Branch+"/x (at "+Abbrev(base)+"), which the worker had made where its branch") {
		t.Errorf("undone: %q", w.Undone)
	}
}

// Where the worker hid a FIFO from a plain walk, the commit finds it all
// the same: in a directory it made unreadable, in one it made read-only,
// in the git dir of a repository it nested in its worktree.
func TestSpecialFilesHiddenFromAWalkAreRemovedToo(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000093")
	w.Known = sh(t, repo, "git rev-parse main")
	write(t, filepath.Join(w.Path, "d", "b.txt"), "b, changed\n")
	write(t, filepath.Join(w.Path, "nested", "f.txt"), "nested\n")
	sh(t, filepath.Join(w.Path, "nested"), "git init -q")
	fifos := []string{"d/.gitattributes", "ro/.gitignore", "nested/.git/HEAD"}
	for _, p := range fifos {
		path := filepath.Join(w.Path, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.Remove(path)
		if err := unix.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(w.Path, "d"), 0o311)
	os.Chmod(filepath.Join(w.Path, "ro"), 0o555)
	t.Cleanup(func() { os.Chmod(filepath.Join(w.Path, "d"), 0o755); os.Chmod(filepath.Join(w.Path, "ro"), 0o755) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, _, err := w.Commit(ctx, "zwarm turn"); err != nil && ctx.Err() != nil {
		t.Fatalf("the commit waited on a FIFO: %v", err)
	}
	for _, p := range fifos {
		if fi, err := os.Lstat(filepath.Join(w.Path, p)); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
			t.Errorf("%s is still a FIFO", p)
		}
	}
}

// Where no cgroup holds a verify's processes, what it started and sent
// out of its process group (setsid) is found by its marker and stopped.
func TestAVerifysDetachedProcessIsSweptByItsMarker(t *testing.T) {
	name := fmt.Sprintf("verify-test-%d", time.Now().UnixNano())
	cmd := exec.Command("setsid", "sh", "-c", "sleep 300")
	cmd.Env = append(os.Environ(), proc.MarkerEnv+"="+name)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.Now().Add(10 * time.Second)
	for len(proc.Scope{ID: name}.Procs()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	sweepVerify(context.Background(), name, nil)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the detached process outlived the sweep")
	}
}

// A worker that nests directories deeper than a whole path may name
// (every git fails there) gets the walk's refusal at once, as git's: the
// walk does not follow it down holding a descriptor and a longer path
// for each level.
func TestTheSweepStopsWhereAPathGrowsTooLong(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000094")
	fd, err := unix.Open(w.Path, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 3000 {
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	unix.Close(fd)
	_, err = w.sweepSpecial()
	if !errors.Is(err, unix.ENAMETOOLONG) {
		t.Fatalf("the sweep of 3,000 nested directories returned %v, want the path too long", err)
	}
}

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
	"strings"
	"syscall"
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

// A directory the worker left listable but not searchable (0600) hid what
// is below it from the walk, and the removal of a FIFO in it made it
// searchable: git then entered it, to wait for good on a .gitignore FIFO
// below. The walk makes such a directory searchable before it goes on,
// and sweeps what is below it too. Run as a user the permissions bind.
func TestSpecialFilesBelowADirectoryThatCannotBeEnteredAreRemoved(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	wt := filepath.Join(top, "wt")
	var fifos []string
	for i := range 5 {
		d := filepath.Join(wt, "nox", fmt.Sprintf("c%d", i))
		os.MkdirAll(d, 0o700)
		fifos = append(fifos, filepath.Join(d, ".gitignore"))
	}
	fifos = append(fifos, filepath.Join(wt, "nox", "f"))
	for _, p := range fifos {
		if err := unix.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(wt, "nox"), 0o700) })
	said := sweepAsAUser(t, top, wt, func() { os.Chmod(filepath.Join(wt, "nox"), 0o600) })
	for _, p := range fifos {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there (the sweep said %q)", p, said)
		}
	}
}

// sweepAsAUser sweeps the worktree wt, in top, as a user whom permissions
// bind: this process's, or, for root, uid 65534 in a process of its own
// (TestSweepHelper), top and the test binary made its. prepare runs just
// before the sweep, once what is in top is that user's. It returns what
// the sweep said.
func sweepAsAUser(t *testing.T, top, wt string, prepare func()) string {
	t.Helper()
	if os.Geteuid() != 0 {
		prepare()
		removed, err := (&Worktree{Path: wt}).sweepSpecial()
		return fmt.Sprint(removed, err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(top, "workspace.test")
	if b, err := os.ReadFile(exe); err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatal("copy the test binary:", err)
	}
	// t.TempDir's directories are 0700; those above them are the
	// machine's, left as they are.
	for dir := top; strings.HasPrefix(dir, os.TempDir()+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil {
			os.Chmod(dir, fi.Mode().Perm()|0o011)
		}
	}
	filepath.WalkDir(top, func(p string, _ fs.DirEntry, _ error) error { return os.Lchown(p, 65534, 65534) })
	prepare()
	cmd := exec.Command(bin, "-test.run=^TestSweepHelper$")
	cmd.Env = append(os.Environ(), "ZWARM_TEST_SWEEP="+wt)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the sweep as uid 65534: %v\n%s", err, out)
	}
	return string(out)
}

// TestSweepHelper is the sweep in a process of its own, for sweepAsAUser;
// run otherwise, it does nothing.
func TestSweepHelper(t *testing.T) {
	if wt := os.Getenv("ZWARM_TEST_SWEEP"); wt != "" {
		removed, err := (&Worktree{Path: wt}).sweepSpecial()
		fmt.Println(removed, err)
	}
}

package workspace

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The branch's ref file answers whether a settled worker's branch is at
// the recorded tip only when git would say the same; anything else is a
// no, and git is asked.
func TestTheTipFileSaysYesOnlyWhereGitWould(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"main.go": "package main\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-0000000000b1")
	head := work(t, w, "a.txt", "a\n")
	if w.OwnDir == "" {
		t.Fatal("the worktree has no repository of its own")
	}
	ref := filepath.Join(w.OwnDir, "refs", "heads", filepath.FromSlash(w.Branch))
	if !w.tipFileHolds(head) {
		t.Fatalf("the branch's loose ref holds %q, the tip is %s: not taken for it", read(t, ref), head)
	}
	if w.tipFileHolds(head[:12]) || w.tipFileHolds("") {
		t.Fatal("an abbreviated or empty commit was taken for the tip")
	}
	other := sh(t, repo, "git rev-parse HEAD")
	if w.tipFileHolds(other) {
		t.Fatal("another commit was taken for the tip")
	}

	// Packed: the loose file is gone, and only git can say.
	sh(t, w.OwnDir, "git pack-refs --all --prune")
	if _, err := os.Stat(ref); !os.IsNotExist(err) {
		t.Fatalf("pack-refs left the loose ref: %v", err)
	}
	if w.tipFileHolds(head) {
		t.Fatal("a packed branch was answered without git")
	}

	// A symbolic ref, and a file that leads out of the repository, even
	// to a file that holds the tip.
	write(t, ref, "ref: refs/heads/main\n")
	if w.tipFileHolds(head) {
		t.Fatal("a symbolic ref was taken for the tip")
	}
	// A symlink whose text names a ref is a symbolic ref to git, whatever
	// the path it names as a file holds.
	os.Remove(ref)
	write(t, filepath.Join(filepath.Dir(ref), "refs", "heads", "main"), head+"\n")
	if err := os.Symlink("refs/heads/main", ref); err != nil {
		t.Fatal(err)
	}
	if w.tipFileHolds(head) {
		t.Fatal("a symlink in the branch's place was followed as a path")
	}
	outside := filepath.Join(t.TempDir(), "tip")
	write(t, outside, head+"\n")
	os.Remove(ref)
	if err := os.Symlink(outside, ref); err != nil {
		t.Fatal(err)
	}
	if w.tipFileHolds(head) {
		t.Fatal("a ref file that leads out of the repository was read")
	}
	// A FIFO is not opened to wait for a writer.
	os.Remove(ref)
	if err := syscall.Mkfifo(ref, 0o644); err != nil {
		t.Fatal(err)
	}
	answered := make(chan bool, 1)
	go func() { answered <- w.tipFileHolds(head) }()
	select {
	case yes := <-answered:
		if yes {
			t.Fatal("a FIFO was taken for the tip")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a FIFO in the branch's place held the answer for 10 s")
	}
	os.Remove(ref)
	write(t, ref, head+"\n"+strings.Repeat("x", 200))
	if w.tipFileHolds(head) {
		t.Fatal("a ref file with more than the commit was taken for the tip")
	}
}

// A settled worker's diff starts no git in the worker's repository when
// its branch's ref file holds the recorded tip: its diff is made even
// when that repository's git could not run at all.
func TestADiffAtTheRecordedTipAsksNothingOfTheWorkersGit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t, map[string]string{"main.go": "package main\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-0000000000b2")
	base := sh(t, w.Path, "git rev-parse HEAD")
	head := work(t, w, "gen.txt", "generated\n")
	write(t, filepath.Join(w.OwnDir, "config"), "[broken\n")

	var out bytes.Buffer
	done, err := w.DiffAtRecordedTip(ctx, &out, base, head, DiffOptions{Format: StatOnly})
	if !done || err != nil || !strings.Contains(out.String(), "gen.txt") {
		t.Fatalf("done %v, %v, %q", done, err, out.String())
	}
}

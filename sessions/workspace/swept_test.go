package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sweepOnce is sweepSpecial that says whether it read any directory.
func sweepOnce(t *testing.T, w *Worktree) (removed []string, read bool) {
	t.Helper()
	return sweepAt(t, w, time.Time{})
}

// sweepAt is sweepOnce as if it began at began (unless zero): what is
// stamped within racyWithin before it is too close to it.
func sweepAt(t *testing.T, w *Worktree, began time.Time) (removed []string, read bool) {
	t.Helper()
	if !w.remembers() {
		t.Fatalf("the tests' temporary directory is on a file system whose times zwarm does not trust; run them on ext4, xfs, btrfs, tmpfs or overlayfs")
	}
	root, err := os.OpenRoot(w.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	s := &sweeper{fix: true, f: func(p string, _ os.FileMode) error {
		rel, _ := filepath.Rel(w.Path, p)
		removed = append(removed, filepath.ToSlash(rel))
		return root.Remove(rel)
	}}
	w.remembering(s)
	if !began.IsZero() {
		s.began = began
	}
	if err := s.walk(w.Path); err != nil {
		t.Fatal(err)
	}
	w.keepSwept(s)
	return removed, s.read
}

// A sweep after one that found the worktree clean reads only the
// directories changed since: a FIFO made in one, however deep below
// directories that did not change, or in a directory made since, or
// moved in, is found all the same.
func TestASweepReadsOnlyWhatChangedSinceTheLast(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a/b/c/d.txt": "d\n", "e/f.txt": "f\n", "g.txt": "g\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-0000000000a0")
	settle()
	if removed, read := sweepOnce(t, w); len(removed) != 0 || !read {
		t.Fatalf("first sweep: removed %v, read %v", removed, read)
	}
	if removed, read := sweepOnce(t, w); len(removed) != 0 || read {
		t.Fatalf("a sweep of what did not change: removed %v, read a directory %v", removed, read)
	}
	// A file's content changed is no entry made: nothing to read.
	write(t, filepath.Join(w.Path, "a", "b", "c", "d.txt"), "d, changed\n")
	if _, read := sweepOnce(t, w); read {
		t.Error("a changed file had the sweep read its directory")
	}
	mkfifo := func(p string) {
		path := filepath.Join(w.Path, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := unix.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		make func()
		want string
	}{
		{"deep below unchanged directories", func() { mkfifo("a/b/c/.gitignore") }, "a/b/c/.gitignore"},
		{"in a directory made since", func() { mkfifo("e/new/deeper/pipe") }, "e/new/deeper/pipe"},
		{"in a directory moved in", func() {
			outside := t.TempDir()
			os.Mkdir(filepath.Join(outside, "m"), 0o755)
			unix.Mkfifo(filepath.Join(outside, "m", "pipe"), 0o644)
			settle() // its stamps old: only the move shows
			if err := os.Rename(filepath.Join(outside, "m"), filepath.Join(w.Path, "a", "b", "m")); err != nil {
				t.Fatal(err)
			}
		}, "a/b/m/pipe"},
		{"in a directory put in another's place", func() {
			os.Rename(filepath.Join(w.Path, "e"), filepath.Join(w.Path, "e.old"))
			mkfifo("e/pipe")
			os.RemoveAll(filepath.Join(w.Path, "e.old"))
		}, "e/pipe"},
	} {
		settle() // what the last sweep read is remembered
		c.make()
		if removed, _ := sweepOnce(t, w); strings.Join(removed, ",") != c.want {
			t.Errorf("%s: the sweep removed %v, want %s", c.name, removed, c.want)
		}
	}
}

// A directory stamped too close to the sweep may yet change in the same
// tick of the clock without its stamp changing: it is read again next
// time, not remembered.
func TestADirectoryJustMadeIsNotRemembered(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a/b.txt": "b\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-0000000000a1")
	settle()
	os.MkdirAll(filepath.Join(w.Path, "new", "below"), 0o755)
	// The sweep begins, as far as the clock goes, just after: however
	// long the machine took to get there.
	made, err := stampDir(filepath.Join(w.Path, "new", "below"))
	if err != nil {
		t.Fatal(err)
	}
	sweepAt(t, w, time.Unix(0, made.ctime).Add(racyWithin/2))
	data, err := os.ReadFile(sweptFile(w.Path))
	if err != nil {
		t.Fatal(err)
	}
	known := decodeSwept(string(data), w.Path)
	if known == nil || known["a"].stamp == (stamp{}) {
		t.Fatalf("the record holds %v", known)
	}
	for _, d := range []string{".", "new", "new/below"} {
		if _, ok := known[d]; ok {
			t.Errorf("%s, changed just before the sweep, is remembered", d)
		}
	}
	if _, read := sweepOnce(t, w); !read {
		t.Error("the next sweep read nothing")
	}
}

// A record that is not whole, or names what no directory of the worktree
// can be, is not trusted: the sweep reads everything.
func TestASweptRecordThatIsNotWholeIsNotTrusted(t *testing.T) {
	dirs := map[string]sweptDir{
		".":   {stamp: stamp{dev: 1, ino: 2, ctime: 3, mtime: 4, size: 5}, subdirs: []string{"a", "b c"}},
		"a":   {stamp: stamp{dev: 1, ino: 6, ctime: 7, mtime: 8, size: 9}},
		"b c": {stamp: stamp{dev: 1, ino: 10, ctime: 11, mtime: 12, size: 13}, subdirs: []string{"d"}},
	}
	data := encodeSwept(dirs, "/wt")
	got := decodeSwept(data, "/wt")
	if len(got) != 3 || got["b c"].stamp != dirs["b c"].stamp || strings.Join(got["."].subdirs, ",") != "a,b c" || len(got["a"].subdirs) != 0 {
		t.Fatalf("decoded %v", got)
	}
	if decodeSwept(data, "/other") != nil {
		t.Error("another worktree's record was taken")
	}
	for i := range len(data) {
		if decodeSwept(data[:i], "/wt") != nil {
			t.Fatalf("a record cut at %d of %d was taken", i, len(data))
		}
	}
	for _, bad := range []string{"..", ".", "a/../..", ""} {
		tampered := encodeSwept(map[string]sweptDir{".": {stamp: stamp{dev: 1, ino: 2, ctime: 3}, subdirs: []string{"a", bad}}}, "/wt")
		if decodeSwept(tampered, "/wt") != nil {
			t.Errorf("a record naming the subdirectory %q was taken", bad)
		}
	}
}

// Each turn's commit remembers its sweep: a FIFO the worker makes in a
// later turn, below directories that did not change, is removed before
// git reads the worktree, and the turn's work committed.
func TestALaterTurnsFIFOIsRemovedThoughItsDirectoriesWereSwept(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"src/pkg/a.go": "package a\n", "README": "r\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-0000000000a2")
	w.Known = sh(t, repo, "git rev-parse main")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	settle()
	write(t, filepath.Join(w.Path, "README"), "turn 1\n")
	if _, made, err := w.Commit(ctx, "zwarm turn 1"); err != nil || !made {
		t.Fatal(made, err)
	}
	if _, err := os.Stat(sweptFile(w.Path)); err != nil {
		t.Fatalf("the turn's sweep was not remembered: %v", err)
	}
	settle()
	write(t, filepath.Join(w.Path, "README"), "turn 2\n")
	if err := unix.Mkfifo(filepath.Join(w.Path, "src", "pkg", ".gitattributes"), 0o644); err != nil {
		t.Fatal(err)
	}
	head, made, err := w.Commit(ctx, "zwarm turn 2")
	if err != nil || !made {
		t.Fatalf("commit: %v (made %v, waited %v)", err, made, ctx.Err() != nil)
	}
	if got := sh(t, repo, "git show --name-status --format= "+head); got != "M\tREADME" {
		t.Errorf("the turn's commit holds %q", got)
	}
	if !strings.Contains(strings.Join(w.Undone, "\n"), "removed "+filepath.Join(w.Path, "src", "pkg", ".gitattributes")+" (a FIFO") {
		t.Errorf("undone: %q", w.Undone)
	}
	if err := w.Remove(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sweptFile(w.Path)); err == nil {
		t.Error("the record of the sweep outlived its worktree")
	}
}

// The branch HEAD is on is read beside the sweep, which may yet have to
// make the worktree's top one git can enter (a worker can leave it 0600,
// which binds all but root): it is read without entering the worktree.
// Read from inside it, it came back "" (a detached HEAD), and a worker
// on a branch with no commit had its turn's commit fail.
func TestTheBranchHEADIsOnIsReadWithoutEnteringTheWorktree(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-0000000000a3")
	away := w.Path + ".away"
	if err := os.Rename(w.Path, away); err != nil {
		t.Fatal(err)
	}
	ref, err := w.midway(context.Background())
	os.Rename(away, w.Path)
	if err != nil || ref != "refs/heads/"+w.Branch {
		t.Fatalf("HEAD is on %q (%v), want refs/heads/%s", ref, err, w.Branch)
	}
	sh(t, w.Path, "git checkout -q --detach")
	if ref, err := w.midway(context.Background()); err != nil || ref != "" {
		t.Errorf("a detached HEAD is on %q (%v)", ref, err)
	}
}

package workspace

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// settle waits until what a test just changed is older than a scan's
// racy window, so that the next diff's scan is kept: the wait is the
// window itself, measured by the clock the file system stamps from.
func settle() { time.Sleep(racyWithin + 50*time.Millisecond) }

// diffs is every form of a worktree's diff from base, as one string.
func diffs(t *testing.T, w *Worktree, base string) string {
	t.Helper()
	ctx := context.Background()
	var all strings.Builder
	for _, o := range []DiffOptions{{Format: Patch, Binary: true}, {Format: StatOnly, Width: 200}, {Format: NamesOnly}, {Format: Numbers}} {
		var out bytes.Buffer
		if err := w.WorkingDiff(ctx, &out, base, o); err != nil {
			t.Fatalf("diff %+v: %v", o, err)
		}
		all.WriteString(out.String() + "\n--\n")
	}
	files, stat, err := w.WorkingChanges(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		all.WriteString(fmt.Sprintf("%s %+v", f.Path, f) + "\n")
	}
	all.WriteString(stat.String())
	return all.String()
}

// remembered is the diff read through the worktree's scan, which it
// checks is there and holds.
func remembered(t *testing.T, w *Worktree, base string) string {
	t.Helper()
	if !w.remembers() {
		t.Fatalf("the tests' temporary directory is on a file system whose times zwarm does not trust; run them on ext4, xfs, btrfs, tmpfs or overlayfs")
	}
	// A diff that walks makes the scan; the worktree then rests.
	forget(w.Path)
	diffs(t, w, base)
	settle()
	diffs(t, w, base)
	if w.recall() == nil {
		t.Fatalf("no scan held after two diffs of a resting worktree")
	}
	return diffs(t, w, base)
}

// restingWorktree is a worker's worktree of a one-file repository, its
// scan kept, and its base.
func restingWorktree(t *testing.T, id string) (*Worktree, string) {
	t.Helper()
	w := newWorktree(t, newRepo(t, map[string]string{"a.go": "package a\n"}), id)
	base := sh(t, w.Path, "git rev-parse HEAD")
	remembered(t, w, base)
	return w, base
}

// walked is the diff read by walking the worktree, as the turn's commit
// reads it.
func walked(t *testing.T, w *Worktree, base string) string {
	t.Helper()
	forget(w.Path)
	os.WriteFile(scanFile(w.Path), []byte("not a scan"), 0o600)
	out := diffs(t, w, base)
	forget(w.Path)
	return out
}

// The diff read through a scan is the diff the walk makes, whatever the
// worker did to its worktree.
func TestADiffThroughTheScanIsTheDiffOfTheWalk(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, script string
		exclude      []string
	}{
		{name: "nothing"},
		{name: "changed", script: "echo more >> a.go"},
		{name: "new file", script: "echo new > new.go"},
		{name: "new directory with an ignored file", script: "mkdir -p gen/sub && echo x > gen/sub/x.go && echo l > gen/run.log"},
		{name: "deleted", script: "rm b.go"},
		{name: "renamed", script: "mv b.go c.go"},
		{name: "made executable", script: "chmod +x a.go"},
		{name: "symlink", script: "ln -s a.go link.go"},
		{name: "staged then changed", script: "echo s > s.go && git add s.go && echo t >> s.go"},
		{name: "untracked by git rm --cached", script: "git rm -q --cached b.go"},
		{name: "added then deleted", script: "echo s > s.go && git add s.go && rm s.go"},
		{name: "state dirs", script: "mkdir -p .zwarm sub/.zwarm && echo x > .zwarm/x && echo y > sub/.zwarm/y && echo z > sub/z.go"},
		{name: "brought along", script: "mkdir -p vendor && echo v > vendor/v.go && echo e > .env", exclude: []string{"vendor", ".env"}},
		{name: "binary", script: "printf 'a\\000b' > bin.dat"},
		{name: "empty", script: ": > empty.go"},
		{name: "ignored but added", script: "echo l > run.log && git add -f run.log && echo m >> run.log"},
		{name: "in a tracked directory", script: "echo q > pkg/q.go && rm pkg/p.go"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t, map[string]string{"a.go": "package a\n", "b.go": "package b\nvar B = 1\n", ".gitignore": "*.log\n",
				"pkg/p.go": "package p\n"})
			w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-00000000a001")
			w.Exclude = c.exclude
			base := sh(t, w.Path, "git rev-parse HEAD")
			if c.script != "" {
				sh(t, w.Path, c.script)
			}
			want := walked(t, w, base)
			if got := remembered(t, w, base); got != want {
				t.Errorf("through the scan:\n%s\nwalking:\n%s", got, want)
			}
			if c.name != "nothing" && !strings.Contains(want, "in ") {
				t.Errorf("the change is not in the diff:\n%s", want)
			}
		})
	}
}

// An index that tracks what the exclusions leave out, or a submodule, is
// staged as the index has it where a diff of the files would show the
// files; a tracked file that became a directory, or is beyond a symlink,
// is staged as gone. Such a worktree is walked every time.
func TestAWorktreeADiffOfTheFilesWouldMisreadIsAlwaysWalked(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, script string
		files        map[string]string
	}{
		{name: "a state dir below the top, tracked", files: map[string]string{"pkg/.zwarm/keep": "kept\n"}, script: "echo changed >> pkg/.zwarm/keep && echo x > pkg/.zwarm/new"},
		{name: "a brought file the worker staged", script: "echo TOKEN=1 > .env && git add .env && echo TOKEN=2 > .env"},
		{name: "a brought directory the worker committed", script: "mkdir -p vendor && echo v > vendor/v.go && git add vendor && git commit -qm vendor && echo w >> vendor/v.go"},
		{name: "a submodule", script: "git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),sub"},
		{name: "a tracked directory made a symlink", files: map[string]string{"pkg/p.go": "package p\n"}, script: "mkdir other && echo o > other/o.go && rm -r pkg && ln -s other pkg"},
		{name: "a tracked file made a directory", script: "rm a.go && mkdir a.go && echo x > a.go/x.go"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{"a.go": "package a\n"}
			for k, v := range c.files {
				files[k] = v
			}
			repo := newRepo(t, files)
			w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-00000000a005")
			w.Exclude = []string{".env", "vendor"}
			base := sh(t, w.Path, "git rev-parse HEAD")
			sh(t, w.Path, c.script)
			want := walked(t, w, base)
			diffs(t, w, base)
			settle()
			if got := diffs(t, w, base); got != want || w.load() != nil {
				t.Errorf("scan kept: %v\n%s\nwalking:\n%s", w.load() != nil, got, want)
			}
		})
	}
}

// Whatever changes what is untracked makes the scan not hold, and the
// next diff sees the change.
func TestTheScanDoesNotHoldOnceTheWorktreeChanges(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, script, shows string
	}{
		{"a file made", "echo n > new.go", "new.go"},
		{"a file made deep", "echo n > pkg/deep/er/new.go", "pkg/deep/er/new.go"},
		// touch sets a directory's mtime back; its ctime moves all the same.
		{"a file made and its directory's time set back", "t=$(stat -c %y pkg) && echo n > pkg/hidden.go && touch -m -d \"$t\" pkg", "pkg/hidden.go"},
		{"a file removed", "rm pkg/untracked.go", "-pkg/untracked.go"},
		{"a .gitignore changed in place", "printf 'x\\n' > pkg/.gitignore", "pkg/skip.log"},
		{"a .gitignore made", "echo '*.go' > pkg/deep/.gitignore", "-pkg/deep/er/old.go"},
		{"info/exclude made", "d=$(git rev-parse --git-common-dir)/info && mkdir -p \"$d\" && echo 'untracked.go' >> \"$d/exclude\"", "-pkg/untracked.go"},
		{"the excludes file changed", "echo 'er/' >> \"$EXCLUDES\"", "-pkg/deep/er/old.go"},
		// a.go goes from the index and is untracked: with the list of
		// before, the diff would show it deleted.
		{"the worker's index changed", "git rm -q --cached a.go", ""},
		{"a rule that ignored a directory dropped", "printf '' > .gitignore", "build/b.go"},
		{"the excludes file changed through its symlink", "echo 'er/' >> \"$EXCLUDES.target\"", "-pkg/deep/er/old.go"},
		{"an include made", "echo '[core]' > \"$(git rev-parse --git-common-dir)/extra.cfg\" && echo \"excludesFile = $EXCLUDES.more\" >> \"$(git rev-parse --git-common-dir)/extra.cfg\"", "-pkg/untracked.go"},
		{"the index changed in place through a symlink", "i=$(git rev-parse --git-dir)/index && cp \"$i\" \"$i.real\" && GIT_INDEX_FILE=\"$i.real\" git rm -q --cached a.go && cat \"$i.real\" > \"$i.target\"", ""},
		{"HEAD moved", "git symbolic-ref HEAD refs/heads/other", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t, map[string]string{"a.go": "package a\n", ".gitignore": "build/\n", "pkg/.gitignore": "*.log\n", "pkg/p.go": "package p\n"})
			w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-00000000a002")
			// The excludes file and the index are symlinks, and an include
			// is named that is not there yet.
			excludes := filepath.Join(t.TempDir(), "excludes")
			write(t, excludes+".target", "")
			write(t, excludes+".more", "untracked.go\n")
			sh(t, w.Path, "ln -s "+excludes+".target "+excludes+" && d=$(git rev-parse --git-common-dir) && printf '[core]\\n\\texcludesFile = %s\\n' "+excludes+" > \"$d/base.cfg\""+
				" && git config --add include.path base.cfg && git config --add include.path extra.cfg"+
				" && i=$(git rev-parse --git-dir)/index && mv \"$i\" \"$i.target\" && ln -s \"$i.target\" \"$i\""+
				" && echo u > pkg/untracked.go && echo s > pkg/skip.log && mkdir -p pkg/deep/er build && echo o > pkg/deep/er/old.go && echo b > build/b.go")
			base := sh(t, w.Path, "git rev-parse HEAD")
			before := remembered(t, w, base)
			sh(t, w.Path, "export EXCLUDES="+excludes+"; "+c.script)
			if w.recall() != nil {
				t.Fatalf("the scan holds after %s", c.name)
			}
			after := diffs(t, w, base)
			if want := walked(t, w, base); after != want {
				t.Errorf("after %s:\n%s\nwalking:\n%s", c.name, after, want)
			}
			names := func(diff string) string { return strings.Split(diff, "\n--\n")[2] }
			path, gone := strings.CutPrefix(c.shows, "-")
			if path == "" {
				return
			}
			if had := strings.Contains(names(before), path); had != gone || strings.Contains(names(after), path) == gone {
				t.Errorf("%s: %q before %q, after %q", c.name, c.shows, names(before), names(after))
			}
		})
	}
}

// A change made within a moment of the scan cannot be told from the
// scan's own stamps: such a scan is not kept.
func TestAScanTakenAsTheWorktreeChangesIsNotKept(t *testing.T) {
	t.Parallel()
	w, base := restingWorktree(t, "3f2a9c1d-0000-4000-8000-00000000a003")
	began := time.Now()
	write(t, filepath.Join(w.Path, "new.go"), "package a\n")
	// The walk of a diff that began just before the file was made.
	_, _, cleanup, err := w.working(context.Background(), base, began)
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	if w.recall() != nil {
		t.Fatal("a scan was kept of a directory changed a moment before it")
	}
	if s := w.load(); s == nil || s.dirs[0].path != "." || s.dirs[0].stamp != unsure {
		t.Fatalf("the changed directory is not kept unsure: %+v", s)
	}
	// What it did find is right all the same, and once the worktree
	// rests the scan is kept again.
	if got := remembered(t, w, base); !strings.Contains(got, "new.go") {
		t.Errorf("new.go missing:\n%s", got)
	}
}

// The scan is kept where the worker cannot write (its worktree and its
// own repository are its writable roots), and goes with the worktree.
func TestTheScanIsKeptOutOfTheWorkersReachAndGoesWithIt(t *testing.T) {
	t.Parallel()
	w, _ := restingWorktree(t, "3f2a9c1d-0000-4000-8000-00000000a004")
	for _, root := range append([]string{w.Path, w.own()}, w.WritableGitDirs()...) {
		if rel, err := filepath.Rel(root, scanFile(w.Path)); err == nil && !strings.HasPrefix(rel, "..") {
			t.Errorf("the scan %s is inside %s, which the worker can write", scanFile(w.Path), root)
		}
	}
	if err := w.Remove(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if exists(scanFile(w.Path)) {
		t.Error("the scan outlived its worktree")
	}
}

// A scan file cut short, or of another version, is no scan.
func TestAScanFileThatIsNotWholeIsIgnored(t *testing.T) {
	t.Parallel()
	s := &scan{key: "k", files: []stamped{{"/a", stamp{1, 2, 3, 4, 5}}}, dirs: []stamped{{".", stamp{1, 3, 3, 4, 5}}},
		spec: []string{"--", ":/"}, untracked: []string{"new\nline.go", "dir/"}, pruned: []string{"node_modules"}}
	enc := s.encode()
	back, ok := decodeScan(enc)
	if !ok || back.encode() != enc {
		t.Fatalf("round trip: %v %+v", ok, back)
	}
	for i := range len(enc) {
		if _, ok := decodeScan(enc[:i]); ok {
			t.Fatalf("%d of %d bytes read as a scan", i, len(enc))
		}
	}
	if _, ok := decodeScan(strings.Replace(enc, scanVersion, "zwarm scan 0", 1)); ok {
		t.Fatal("another version read as this one")
	}
}

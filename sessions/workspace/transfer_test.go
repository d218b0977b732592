package workspace

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A turn's commit reaches your repository whole, as loose objects (no
// pack per turn piles up, and a large file costs a checkout what it costs
// when you commit it yourself), and fsck finds nothing missing.
func TestATurnsCommitIsTakenIntoYourRepositoryWhole(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000050")
	packs := func() (packs, keeps int) {
		entries, _ := os.ReadDir(filepath.Join(repo, ".git", "objects", "pack"))
		for _, e := range entries {
			switch filepath.Ext(e.Name()) {
			case ".pack":
				packs++
			case ".keep":
				keeps++
			}
		}
		return packs, keeps
	}
	write(t, filepath.Join(w.Path, "small.txt"), "one file\n")
	small, made, err := w.Commit(ctx, "zwarm turn 1")
	if err != nil || !made {
		t.Fatalf("commit: %v %v", err, made)
	}
	if p, k := packs(); p != 0 || k != 0 {
		t.Fatalf("after a one-file turn your repository has %d packs and %d .keep files, want the objects loose", p, k)
	}
	for i := range 150 {
		write(t, filepath.Join(w.Path, "gen", fmt.Sprintf("f%03d.txt", i)), fmt.Sprintf("file %d\n", i))
	}
	large, made, err := w.Commit(ctx, "zwarm turn 2")
	if err != nil || !made {
		t.Fatalf("commit: %v %v", err, made)
	}
	if p, k := packs(); p != 0 || k != 0 {
		t.Fatalf("after a 150-file turn your repository has %d packs and %d .keep files, want the objects loose", p, k)
	}
	blob := make([]byte, 5<<20)
	rand.Read(blob)
	if err := os.WriteFile(filepath.Join(w.Path, "model.bin"), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	big, made, err := w.Commit(ctx, "zwarm turn 3")
	if err != nil || !made {
		t.Fatalf("commit: %v %v", err, made)
	}
	if p, k := packs(); p != 0 || k != 0 {
		t.Fatalf("after a turn with a 5 MiB file your repository has %d packs and %d .keep files, want the objects loose", p, k)
	}
	for _, c := range []string{small, large, big} {
		if got := sh(t, repo, "git rev-parse refs/zwarm/3f2a9c1d-0000-4000-8000-000000000050/"+c); got != c {
			t.Fatalf("the turn's commit %s is not kept in your repository: %s", c, got)
		}
	}
	if got := sh(t, repo, "git rev-parse "+w.Branch); got != big {
		t.Fatalf("%s in your repository is at %s, want %s", w.Branch, got, big)
	}
	if got := sh(t, repo, "git ls-tree -r --name-only "+big+" | wc -l"); got != "153" {
		t.Fatalf("your repository reads %s files in the last turn's commit, want 153", got)
	}
	sh(t, repo, "git fsck --strict --no-dangling")
}

// A worker's repository is the worker's to write: a commit there that
// names an object existing nowhere is never taken into yours, nor kept,
// nor followed; your repository stays whole.
func TestACommitNamingAMissingObjectIsNotTaken(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w := newWorktree(t, repo, "3f2a9c1d-0000-4000-8000-000000000051")
	base := sh(t, repo, "git rev-parse main")
	// As the worker can: its own git writes objects and its branch.
	tree := sh(t, w.Path, `printf '100644 blob 1234567890123456789012345678901234567890\tlost.txt\n' | git mktree --missing`)
	commit := sh(t, w.Path, "git commit-tree "+tree+" -p "+base+" -m forged")
	sh(t, w.Path, "git update-ref refs/heads/"+w.Branch+" "+commit)

	if got := w.Tip(ctx); got != "" {
		t.Fatalf("Tip = %s, want none: the worker's branch names a commit zwarm cannot take", got)
	}
	if err := w.Follow(ctx); err == nil || !strings.Contains(err.Error(), Abbrev(commit)) {
		t.Fatalf("Follow: %v, want an error naming the commit %s", err, Abbrev(commit))
	}
	if out := sh(t, repo, "git cat-file -t "+commit+" 2>&1 || true"); out == "commit" {
		t.Fatalf("the forged commit %s is in your repository", commit)
	}
	if out := sh(t, repo, "git for-each-ref refs/zwarm/"); strings.Contains(out, commit) {
		t.Fatalf("your repository keeps the forged commit: %s", out)
	}
	if got := sh(t, repo, "git rev-parse "+w.Branch); got != base {
		t.Fatalf("%s in your repository moved to %s, want it left at %s", w.Branch, got, base)
	}
	sh(t, repo, "git fsck --strict --no-dangling")
}

// What a worker's repository sends is checked as it is written: a pack
// with an object that names one neither in the pack nor yours (a commit
// without its tree) is refused whole, however many objects come with it,
// and nothing of it is left to find.
func TestAPackNamingObjectsYouLackIsRefused(t *testing.T) {
	t.Parallel()
	for _, blobs := range []int{0, 120} {
		t.Run(fmt.Sprintf("%d-blobs", blobs), func(t *testing.T) {
			t.Parallel()
			repo := newRepo(t, map[string]string{"a.txt": "a\n"})
			w := &Worktree{CommonDir: filepath.Join(repo, ".git"), Branch: BranchFor("3f2a9c1d-0000-4000-8000-000000000052")}
			other := newRepo(t, map[string]string{"b.txt": "b\n"})
			var list strings.Builder
			for i := range blobs {
				list.WriteString(sh(t, other, fmt.Sprintf("echo 'blob %d' | git hash-object -w --stdin", i)) + "\n")
			}
			commit := sh(t, other, "git commit-tree HEAD^{tree} -m 'without its tree'")
			list.WriteString(commit + "\n")
			pack := filepath.Join(t.TempDir(), "pack")
			sh(t, other, fmt.Sprintf("printf %%s '%s' | git pack-objects --stdout > %s", list.String(), pack))
			f, err := os.Open(pack)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := w.unpack(context.Background(), f); err == nil {
				t.Fatal("unpack took a commit whose tree is in neither the pack nor your repository")
			}
			if out := sh(t, repo, "git cat-file -t "+commit+" 2>&1 || true"); out == "commit" {
				t.Fatalf("the commit %s is in your repository", commit)
			}
			sh(t, repo, "git fsck --strict --no-dangling")
		})
	}
}

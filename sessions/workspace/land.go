package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Strategy is how a worker's branch lands.
type Strategy string

const (
	// Squash makes one commit of the whole change on top of the target.
	Squash Strategy = "squash"
	// Merge makes a merge commit of the target and the worker's branch.
	Merge Strategy = "merge"
	// Rebase replays the worker's commits on top of the target.
	Rebase Strategy = "rebase"
)

// ParseStrategy checks a strategy's name; "" is Squash.
func ParseStrategy(s string) (Strategy, error) {
	switch Strategy(s) {
	case "", Squash:
		return Squash, nil
	case Merge, Rebase:
		return Strategy(s), nil
	}
	return "", fmt.Errorf("unknown landing strategy %q (want squash, merge or rebase)", s)
}

// ConflictError says a merge cannot be made without a person (or the
// worker) choosing: Files conflict.
type ConflictError struct {
	Files []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("conflict in %s", strings.Join(e.Files, ", "))
}

// Target is the branch a landing goes into.
type Target struct {
	Branch string
	// Commit is the branch's tip when it was looked at: the landing
	// builds on it, and moves the branch only if it is still there.
	Commit string
	// Checkout is the worktree that has the branch checked out ("" if
	// none does): a landing updates its files too.
	Checkout string
}

// CurrentBranch is the branch checked out at the checkout's top; a
// detached HEAD is an error saying what to do.
func (r *Repo) CurrentBranch(ctx context.Context) (string, error) {
	b, err := git{dir: r.Top}.line(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil || b == "" {
		return "", fmt.Errorf("HEAD is detached in %s: check out the branch to land into, or name it with --into", r.Top)
	}
	return b, nil
}

// FindTarget looks a branch up: its tip, and where it is checked out.
func FindTarget(ctx context.Context, commonDir, branch string) (Target, error) {
	g := git{dir: commonDir}
	commit, err := g.line(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	if err != nil || commit == "" {
		return Target{}, fmt.Errorf("no branch %q in %s", branch, commonDir)
	}
	t := Target{Branch: branch, Commit: commit}
	wts, err := listWorktrees(ctx, commonDir)
	if err != nil {
		return Target{}, err
	}
	for _, wt := range wts {
		if wt.Branch == "refs/heads/"+branch && !wt.Bare {
			t.Checkout = wt.Path
			return t, nil
		}
	}
	// A branch being rebased is checked out nowhere (HEAD is detached
	// meanwhile): the rebase names it, in the git dir of the main checkout
	// or of a linked worktree. Moving it would break the rebase.
	admins := []string{commonDir}
	if ents, err := os.ReadDir(filepath.Join(commonDir, "worktrees")); err == nil {
		for _, e := range ents {
			admins = append(admins, filepath.Join(commonDir, "worktrees", e.Name()))
		}
	}
	for _, admin := range admins {
		for _, d := range []string{"rebase-merge", "rebase-apply"} {
			if b, err := os.ReadFile(filepath.Join(admin, d, "head-name")); err == nil && strings.TrimSpace(string(b)) == "refs/heads/"+branch {
				return Target{}, fmt.Errorf("%s is being rebased (in %s): finish or abort that rebase first", branch, admin)
			}
		}
	}
	return t, nil
}

// MergeTree merges head into target in memory (git merge-tree) and
// returns the tree of the result, or a *ConflictError naming the files
// that conflict. Nothing on disk changes.
func MergeTree(ctx context.Context, commonDir, target, head string) (string, error) {
	out, err := git{dir: commonDir}.run(ctx, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", target, head)
	fields := splitZ(out)
	if err != nil {
		if exitCodeOf(err) == 1 && len(fields) > 1 {
			var files []string
			for _, f := range fields[1:] {
				if f != "" && !slices.Contains(files, f) {
					files = append(files, f)
				}
			}
			return "", &ConflictError{Files: files}
		}
		return "", fmt.Errorf("merge %s into %s: %w", Abbrev(head), Abbrev(target), err)
	}
	if len(fields) == 0 {
		return "", fmt.Errorf("merge %s into %s: git merge-tree printed no tree", Abbrev(head), Abbrev(target))
	}
	return fields[0], nil
}

// CommitTree makes a commit of tree with the given parents, as the user
// (their git identity), without moving any ref.
func CommitTree(ctx context.Context, commonDir, tree, message string, parents ...string) (string, error) {
	args := []string{"commit-tree", tree}
	// commit-tree does not read commit.gpgSign: a user who signs their
	// commits gets a signed landing, as git commit would make it.
	if sign, _ := (git{dir: commonDir}).line(ctx, "config", "--bool", "commit.gpgSign"); sign == "true" {
		args = append(args, "-S")
	}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	g := git{dir: commonDir, stdin: strings.NewReader(message), writes: true}
	return g.line(ctx, args...)
}

// Rebase replays the worktree's commits since upstream onto onto (git
// rebase --onto), as the user. On a conflict the rebase is undone and a
// *ConflictError names the files. It returns the new HEAD.
func (w *Worktree) Rebase(ctx context.Context, onto, upstream string) (string, error) {
	if err := w.pinned(ctx); err != nil {
		return "", err
	}
	g := w.tree()
	g.writes = true
	if _, err := g.run(ctx, "rebase", "--quiet", "--onto", onto, upstream); err != nil {
		files, _ := w.Unmerged(ctx)
		g.run(context.WithoutCancel(ctx), "rebase", "--abort")
		if len(files) > 0 {
			return "", &ConflictError{Files: files}
		}
		return "", err
	}
	return w.followHead(ctx)
}

// Checkout checks rev out in the worktree, detached (to verify a landing
// in it), or the worktree's branch again when rev is "".
func (w *Worktree) Checkout(ctx context.Context, rev string) error {
	if err := w.pinned(ctx); err != nil {
		return err
	}
	g := w.tree()
	g.writes = true
	var err error
	if rev == "" {
		// Back from a verify run: what the verify command changed in the
		// checked-out files is its own, not the worker's (whose work is
		// committed), and goes.
		_, err = g.run(ctx, "checkout", "--quiet", "--force", w.Branch, "--")
	} else {
		_, err = g.run(ctx, "checkout", "--quiet", "--detach", rev, "--")
	}
	return err
}

// Overlap lists the files a checkout has uncommitted changes to (or
// untracked files at) that moving it from one commit (or tree) to another would
// change: what a landing into it would otherwise overwrite.
func Overlap(ctx context.Context, checkout, from, to string) ([]string, error) {
	g := git{dir: checkout}
	out, err := g.run(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return nil, err
	}
	dirty := map[string]bool{}
	for _, rec := range splitZ(out) {
		if len(rec) > 3 {
			dirty[rec[3:]] = true
		}
	}
	changed, err := g.run(ctx, "diff", "--name-status", "--no-renames", "-z", from, to, "--")
	if err != nil {
		return nil, err
	}
	var hit []string
	fields := splitZ(changed)
	for i := 0; i+1 < len(fields); i += 2 {
		status, f := fields[i], fields[i+1]
		switch {
		case dirty[f]:
			hit = append(hit, f)
		case status == "A" && present(filepath.Join(checkout, f)):
			// A file the branch does not track, ignored by git (.env,
			// say): a fast-forward would overwrite it without a word.
			hit = append(hit, f)
		case status == "A":
			// A file of yours where the change needs a directory (your
			// ignored notes, the change's notes/todo.md): git replaces
			// it without a word too.
			if p := fileOnTheWay(checkout, f); p != "" && !slices.Contains(hit, p) {
				hit = append(hit, p)
			}
		}
	}
	return hit, nil
}

// fileOnTheWay names the first of rel's parent directories (relative to
// top) that is there as something else than a directory: a file, or a
// symlink; "" if none is.
func fileOnTheWay(top, rel string) string {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		p := strings.Join(parts[:i], "/")
		fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
		if err != nil {
			return ""
		}
		if !fi.IsDir() {
			return p
		}
	}
	return ""
}

func present(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// ErrMoved says the target branch moved while the landing was being
// made: nothing was changed, and landing again builds on its new tip.
var ErrMoved = errors.New("the branch moved while landing; nothing was changed: land again")

// smallPackWindows has git map a pack 16 MiB at a time, 64 MiB at most,
// where it would map up to 1 GiB at once: a checkout of a large file kept
// in a pack then peaks at the file's size and a little more, not twice
// it (a 150 MB file: 185 MB, not 312), as it does from a loose object.
var smallPackWindows = []string{"-c", "core.packedGitWindowSize=16m", "-c", "core.packedGitLimit=64m"}

// Advance moves the target branch from t.Commit to commit, which must
// descend from it. A branch checked out in a worktree is fast-forwarded
// there, so its files follow; git refuses, and nothing changes, if that
// would overwrite uncommitted changes. Otherwise only the ref moves, and
// only if it still points at t.Commit.
func Advance(ctx context.Context, commonDir string, t Target, commit, reason string) error {
	if t.Checkout == "" {
		_, err := git{dir: commonDir, writes: true}.run(ctx, "update-ref", "-m", reason, "refs/heads/"+t.Branch, commit, t.Commit)
		if err != nil {
			now, _ := git{dir: commonDir}.line(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+t.Branch)
			if now != t.Commit {
				return ErrMoved
			}
			return err
		}
		return nil
	}
	g := git{dir: t.Checkout, writes: true}
	if ref, _ := g.line(ctx, "symbolic-ref", "--quiet", "HEAD"); ref != "refs/heads/"+t.Branch {
		return fmt.Errorf("%s no longer has %s checked out (now %s); nothing was changed: land again", t.Checkout, t.Branch, cmp.Or(strings.TrimPrefix(ref, "refs/heads/"), "a detached HEAD"))
	}
	head, err := g.line(ctx, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return err
	}
	if head != t.Commit {
		return ErrMoved
	}
	// Once begun, the checkout is finished, whatever comes (a Ctrl+C, a
	// kill): stopped midway it would leave your files half written.
	ff := g
	ff.whole = true
	if _, err := ff.run(ctx, append(smallPackWindows, "merge", "--quiet", "--ff-only", "--no-stat", commit)...); err != nil {
		if now, _ := g.line(context.WithoutCancel(ctx), "rev-parse", "--verify", "HEAD"); now != t.Commit && now != commit {
			return ErrMoved // committed on between the look above and git's own
		}
		// git stopped while it wrote the checkout (a full disk): the
		// branch did not move, but files may be half written.
		return fmt.Errorf("update %s in %s: %w; %s did not move, but the files git was writing may be left half written: look at git status in %s before you commit anything",
			t.Branch, t.Checkout, err, t.Branch, t.Checkout)
	}
	return nil
}

// MergeFrom merges rev into the worktree's branch (zwarm update), as
// zwarm. A conflict leaves the merge in progress in the worktree, with
// the conflict markers in the files, for the worker to resolve, and
// returns a *ConflictError naming them; the commit at the worker's next
// turn's end concludes it.
func (w *Worktree) MergeFrom(ctx context.Context, rev, message string) (string, error) {
	if err := w.pinned(ctx); err != nil {
		return "", err
	}
	// Named in your repository: the worker's has your branches only as
	// they were when it was made.
	commit, err := ResolveCommit(ctx, w.CommonDir, rev)
	if err != nil {
		return "", err
	}
	g := w.tree()
	g.writes, g.zwarm = true, true
	if _, err := g.run(ctx, "merge", "--quiet", "--no-edit", "-m", message, commit); err != nil {
		if files, _ := w.Unmerged(ctx); len(files) > 0 {
			return "", &ConflictError{Files: files}
		}
		return "", err
	}
	return w.followHead(ctx)
}

// IsAncestor reports whether a is an ancestor of (or equal to) b.
func IsAncestor(ctx context.Context, commonDir, a, b string) bool {
	_, err := git{dir: commonDir}.run(ctx, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

// CommitExists reports whether the repository still has a commit.
func CommitExists(ctx context.Context, commonDir, commit string) bool {
	_, err := git{dir: commonDir}.run(ctx, "cat-file", "-e", commit+"^{commit}")
	return err == nil
}

// TreeOf is a commit's tree.
func TreeOf(ctx context.Context, commonDir, commit string) (string, error) {
	return git{dir: commonDir}.line(ctx, "rev-parse", "--verify", commit+"^{tree}")
}

// ResolveCommit is the commit rev names in the repository.
func ResolveCommit(ctx context.Context, commonDir, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("%q is not a branch or commit", rev)
	}
	c, err := git{dir: commonDir}.line(ctx, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil || c == "" {
		return "", fmt.Errorf("%q is not a branch or commit in %s", rev, commonDir)
	}
	return c, nil
}

// ApplyTree is the tree of applying the change from..to to target, three
// way (git apply --3way, in an index of its own): only that change, for a
// worker whose change starts from a commit target does not have (a
// snapshot of uncommitted work, or what was landed before by a squash).
// A conflict is a *ConflictError naming the files. Nothing on disk
// changes but objects.
func ApplyTree(ctx context.Context, commonDir, target, from, to string) (string, error) {
	idx, err := os.CreateTemp("", "zwarm-land-index-*")
	if err != nil {
		return "", err
	}
	idx.Close()
	os.Remove(idx.Name()) // git makes it
	defer os.Remove(idx.Name())
	defer os.Remove(idx.Name() + ".lock")
	g := git{dir: commonDir, env: []string{"GIT_INDEX_FILE=" + idx.Name()}, writes: true}
	if _, err := g.run(ctx, "read-tree", target); err != nil {
		return "", err
	}
	if _, err := (git{dir: commonDir}).run(ctx, "diff", "--quiet", from, to, "--"); err == nil {
		return TreeOf(ctx, commonDir, target) // no change
	} else if exitCodeOf(err) != 1 {
		return "", err
	}
	// The patch goes from git diff straight into git apply: a change with
	// a large binary file in it is never held in memory here.
	if err := applyPatch(ctx, commonDir, g, from, to); err != nil {
		g.stdin = nil
		out, _ := g.run(ctx, "ls-files", "--unmerged", "-z")
		var files []string
		for _, rec := range splitZ(out) {
			if _, f, ok := strings.Cut(rec, "\t"); ok && !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
		if len(files) > 0 {
			return "", &ConflictError{Files: files}
		}
		return "", fmt.Errorf("apply the change to %s: %w", Abbrev(target), err)
	}
	g.stdin = nil
	return g.line(ctx, "write-tree")
}

// applyPatch pipes git diff --binary from..to into git apply --cached
// --3way run as g (an index of its own). A failure of the diff is
// reported before one of the apply, which then only saw part of it.
func applyPatch(ctx context.Context, commonDir string, g git, from, to string) error {
	r, w := io.Pipe()
	diffErr := make(chan error, 1)
	go func() {
		d := git{dir: commonDir, stdout: w}
		_, err := d.run(ctx, "diff", "--binary", "--full-index", "--no-ext-diff", "--no-textconv", from, to, "--")
		w.CloseWithError(err)
		diffErr <- err
	}()
	g.stdin = r
	_, err := g.run(ctx, "apply", "--cached", "--3way", "--whitespace=nowarn")
	r.CloseWithError(errors.New("git apply ended")) // unblocks the diff should apply end early
	if derr := <-diffErr; derr != nil {
		return fmt.Errorf("diff %s..%s: %w", Abbrev(from), Abbrev(to), derr)
	}
	return err
}

// Merges counts the merge commits in to but not in from.
func Merges(ctx context.Context, commonDir, from, to string) (int, error) {
	out, err := git{dir: commonDir}.line(ctx, "rev-list", "--count", "--merges", to, "^"+from, "--")
	if err != nil {
		return 0, err
	}
	var n int
	_, err = fmt.Sscan(out, &n)
	return n, err
}

// CleanUntracked removes the untracked files git does not ignore from
// the worktree, what was brought along and zwarm's state dir aside: what
// a verify run left.
func (w *Worktree) CleanUntracked(ctx context.Context) error {
	if err := w.pinned(ctx); err != nil {
		return err
	}
	g := w.tree()
	g.writes = true
	args := []string{"clean", "-f", "-d", "-q", "-e", StateDirName}
	for _, b := range w.Exclude {
		args = append(args, "-e", "/"+b)
	}
	_, err := g.run(ctx, args...)
	return err
}

// CommitGone reports whether the repository lacks a commit (git gc took
// it); an error is git failing to read the repository at all.
func CommitGone(ctx context.Context, commonDir, commit string) (bool, error) {
	// cat-file -e of a full object id exits 1, quietly, for a missing
	// object, and 128 when git cannot read the repository.
	_, err := git{dir: commonDir}.run(ctx, "cat-file", "-e", commit)
	if err != nil && exitCodeOf(err) == 1 {
		return true, nil
	}
	return false, err
}

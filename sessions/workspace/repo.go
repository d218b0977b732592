package workspace

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Repo is the git checkout a directory belongs to.
type Repo struct {
	// Top is the top-level directory of the checkout that holds the
	// directory: the main checkout, or a linked worktree's own.
	Top string
	// GitDir is that checkout's own git dir (its index and HEAD);
	// CommonDir is the repository's, shared by all its worktrees.
	GitDir, CommonDir string
	// Prefix is the directory relative to Top, "" at the top.
	Prefix string
}

// Linked reports whether the checkout is a linked worktree rather than
// the repository's main checkout.
func (r *Repo) Linked() bool { return r.GitDir != r.CommonDir }

// Main is the repository's main checkout: the directory its common git
// dir is the .git of. For a bare repository (worktrees only) it is the
// common dir itself.
func (r *Repo) Main() string {
	if filepath.Base(r.CommonDir) == ".git" {
		return filepath.Dir(r.CommonDir)
	}
	return r.CommonDir
}

// Name is a short name for the repository: its main checkout's name.
func (r *Repo) Name() string {
	return strings.TrimSuffix(filepath.Base(r.Main()), ".git")
}

// ErrNotRepo says a directory is not inside a git work tree.
var ErrNotRepo = errors.New("not in a git repository")

// Find returns the checkout dir is in, or ErrNotRepo. Whether dir is in
// a repository at all is decided by looking for .git upwards, as git
// does, so that any error git reports afterwards (a repository owned by
// another user, say) is reported as an error, never taken for "no
// repository here".
func Find(ctx context.Context, dir string) (*Repo, error) {
	if !hasDotGit(dir) {
		return nil, ErrNotRepo
	}
	out, err := git{dir: dir}.run(ctx, "rev-parse", "--path-format=absolute",
		"--show-toplevel", "--absolute-git-dir", "--git-common-dir", "--show-prefix")
	if err != nil {
		if notARepository(err) {
			// A .git on the way that git takes for no repository (the
			// empty directory a sandbox makes to mask a writable root's
			// .git, say): git's answer stands.
			return nil, ErrNotRepo
		}
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 3 {
		return nil, fmt.Errorf("%s: unexpected answer from git rev-parse: %q", dir, out)
	}
	r := &Repo{Top: lines[0], GitDir: filepath.Clean(lines[1]), CommonDir: filepath.Clean(lines[2])}
	if len(lines) > 3 {
		r.Prefix = strings.TrimSuffix(lines[3], "/")
	}
	return r, nil
}

// notARepository reports whether git failed because it found no
// repository above the directory: other failures (a repository owned by
// another user, a .git file naming a git dir that is gone) are errors to
// report as they are.
func notARepository(err error) bool {
	var ge *GitError
	return errors.As(err, &ge) && ge.Code == 128 && strings.Contains(ge.Stderr, "not a git repository (or any")
}

// hasDotGit reports whether dir or a parent has a .git entry (a
// directory, or the file a linked worktree has).
func hasDotGit(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// MainCheckout follows a linked worktree's .git file to the main
// checkout of its repository, by reading files only (no git process):
// dir is a worktree's top level. It returns "" when dir is not a linked
// worktree. State-dir discovery uses it to find the repository's .zwarm
// from inside a worker's worktree.
func MainCheckout(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return "" // a directory (the main checkout), or none
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	common, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return ""
	}
	cd := strings.TrimSpace(string(common))
	if !filepath.IsAbs(cd) {
		cd = filepath.Join(gitdir, cd)
	}
	cd = filepath.Clean(cd)
	if filepath.Base(cd) != ".git" {
		return ""
	}
	return filepath.Dir(cd)
}

// Base is the commit a worker starts from.
type Base struct {
	// Name is how it was named: a branch ("feature-x"), or the commit
	// itself when it was given as one or HEAD is detached.
	Name string
	// Branch says Name is a branch, which update merges from.
	Branch bool
	Commit string
}

// ResolveBase resolves what a worker starts from: rev, or the checkout's
// HEAD when rev is "". A name that is no commit is an error saying so.
func (r *Repo) ResolveBase(ctx context.Context, rev string) (Base, error) {
	g := git{dir: r.Top}
	if strings.HasPrefix(rev, "-") {
		return Base{}, fmt.Errorf("base %q: not a commit (a branch, tag or commit id)", rev)
	}
	name := rev
	if rev == "" {
		rev = "HEAD"
	}
	commit, err := g.line(ctx, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if ctx.Err() != nil {
		return Base{}, fmt.Errorf("resolve the base in %s: %w", r.Top, ctx.Err()) // cut short, not answered
	}
	if err != nil || commit == "" {
		if rev == "HEAD" {
			return Base{}, fmt.Errorf("%s has no commits yet: commit something first, or work in place (spawn --in-place; isolation \"none\" over MCP)", r.Top)
		}
		return Base{}, fmt.Errorf("base %q is not a commit in %s (a branch, tag or commit id)", rev, r.Top)
	}
	full, _ := g.line(ctx, "rev-parse", "--symbolic-full-name", rev)
	if short, ok := strings.CutPrefix(full, "refs/heads/"); ok {
		return Base{Name: short, Branch: true, Commit: commit}, nil
	}
	if name == "" || name == "HEAD" {
		name = commit // a detached HEAD: the commit is all there is
	}
	return Base{Name: name, Commit: commit}, nil
}

// Snapshot makes a commit of the checkout as it is: HEAD plus every
// uncommitted change, untracked files included (ignored ones are not),
// without touching the checkout, its index or any ref. It returns HEAD
// itself when nothing is uncommitted. A worker started from it sees the
// work in progress (spawn --with-changes).
func (r *Repo) Snapshot(ctx context.Context, head string) (string, error) {
	idx, cleanup, err := tempIndex(r.GitDir)
	if err != nil {
		return "", err
	}
	defer cleanup()
	g := git{dir: r.Top, env: []string{"GIT_INDEX_FILE=" + idx}, writes: true, zwarm: true}
	if _, err := g.run(ctx, "add", "-A", "--", ":/"); err != nil {
		return "", fmt.Errorf("snapshot the uncommitted changes: %w", err)
	}
	c, _, err := commitIndex(ctx, g, head, "zwarm: uncommitted changes of "+r.Top)
	if err != nil {
		return "", fmt.Errorf("snapshot the uncommitted changes: %w", err)
	}
	return c, nil
}

// commitIndex makes a commit of the index g stages into, on top of rev
// (a commit, or HEAD), moving no ref, and returns it and its parent, the
// commit rev names; the parent itself when the index holds its tree.
func commitIndex(ctx context.Context, g git, rev, message string) (commit, parent string, err error) {
	// rev is read beside the writing of the tree.
	revs := beside(func() (string, error) { return g.run(ctx, "rev-parse", rev, rev+"^{tree}") })
	tree, err := g.unjudged().line(ctx, "write-tree")
	out, rerr := revs()
	if err != nil && g.left != nil {
		tree, err = g.line(ctx, "write-tree")
	}
	if err != nil {
		return "", "", err
	}
	err = rerr
	f := strings.Fields(out)
	if err != nil || len(f) != 2 {
		return "", "", cmp.Or(err, fmt.Errorf("git rev-parse %s printed %q", rev, out))
	}
	if parent = f[0]; f[1] == tree {
		return parent, parent, nil
	}
	commit, err = g.line(ctx, "commit-tree", tree, "-p", parent, "-m", message)
	return commit, parent, err
}

// tempIndex copies a checkout's index to a temporary file, so that git
// can stage into it without touching the real one; the copy keeps the
// files' cached stat data, so only changed files are read again.
//
// The copy keeps the index's modification time too: git takes a file, or
// a directory in its untracked cache, changed in the same instant as the
// index was written for one that may have changed since ("racily clean"),
// by that time. A copy dated now would vouch for them all, and a file
// written just after the worker's last git command would go unseen. (The
// time is read before the index: should the index change in between, an
// older time only makes git look at more.)
func tempIndex(gitDir string) (string, func(), error) {
	f, err := os.CreateTemp("", "zwarm-index-*")
	if err != nil {
		return "", nil, fmt.Errorf("temporary index: %w", err)
	}
	path := f.Name()
	cleanup := func() { os.Remove(path); os.Remove(path + ".lock") }
	index := filepath.Join(gitDir, "index")
	fi, err := os.Stat(index)
	var data []byte
	if err == nil {
		data, err = os.ReadFile(index)
	}
	if err == nil {
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Chtimes(path, fi.ModTime(), fi.ModTime())
		}
	} else if errors.Is(err, os.ErrNotExist) {
		err = nil
		f.Close()
		os.Remove(path) // git makes a fresh one
		return path, cleanup, nil
	} else {
		f.Close()
	}
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("temporary index: %w", err)
	}
	return path, cleanup, nil
}

// tempIndexEnv has git use the copy of an index at idx, and git status
// not write it back: what status learns (files' metadata, the untracked
// cache) would be thrown away with the copy, after a write that costs as
// much as the staging that follows.
func tempIndexEnv(idx string) []string {
	return []string{"GIT_INDEX_FILE=" + idx, "GIT_OPTIONAL_LOCKS=0"}
}

// WorktreesRoot is where a repository's worktrees go under root (the
// [worktrees] dir, by default $XDG_DATA_HOME/zwarm/worktrees): a
// directory per repository, named after it and a hash of its git dir's
// path, so two checkouts of the same name never share one.
func (r *Repo) WorktreesRoot(root string) string {
	sum := sha256.Sum256([]byte(r.CommonDir))
	return filepath.Join(root, r.Name()+"-"+hex.EncodeToString(sum[:4]))
}

// WorkerOf says whether dir is in a worker's worktree under root (the
// root of every repository's worktrees), as named or as its links
// resolve, and which: the name of its worktree's directory, the
// session's id. A worker's repository is the worker's to write, so zwarm
// never takes it for yours.
func WorkerOf(root, dir string) (string, bool) {
	if id, ok := workerUnder(root, dir); ok {
		return id, true
	}
	r, rerr := filepath.EvalSymlinks(root)
	d, derr := filepath.EvalSymlinks(dir)
	if rerr != nil || derr != nil {
		return "", false
	}
	return workerUnder(r, d)
}

func workerUnder(root, dir string) (string, bool) {
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(dir))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	parts := strings.Split(rel, string(filepath.Separator))
	if len(parts) < 2 {
		return "", false // a repository's own directory of worktrees
	}
	return strings.TrimSuffix(parts[1], ".git"), true
}

// DefaultRoot is $XDG_DATA_HOME/zwarm/worktrees, else
// ~/.local/share/zwarm/worktrees.
func DefaultRoot() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "zwarm", "worktrees"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("where to put worktrees: %w (set XDG_DATA_HOME or [worktrees] dir)", err)
	}
	return filepath.Join(home, ".local", "share", "zwarm", "worktrees"), nil
}

package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// worktreeEntry is one entry of git worktree list --porcelain.
type worktreeEntry struct {
	Path, Head, Branch string
	Bare               bool
}

func listWorktrees(ctx context.Context, commonDir string) ([]worktreeEntry, error) {
	out, err := git{dir: commonDir}.run(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var list []worktreeEntry
	var cur *worktreeEntry
	for _, f := range strings.Split(out, "\x00") {
		k, v, _ := strings.Cut(f, " ")
		switch k {
		case "worktree":
			list = append(list, worktreeEntry{Path: v})
			cur = &list[len(list)-1]
		case "HEAD":
			if cur != nil {
				cur.Head = v
			}
		case "branch":
			if cur != nil {
				cur.Branch = v
			}
		case "bare":
			if cur != nil {
				cur.Bare = true
			}
		}
	}
	return list, nil
}

// Leftover is a worktree of zwarm's whose session is gone.
type Leftover struct {
	// ID is the session the worktree was made for.
	ID   string
	Path string
	// Branch is its branch, "" if git no longer has it.
	Branch string
	// Own is the git dir of the worker's own repository, "" for a
	// worktree of your repository itself.
	Own string
	// Registered says git knows it as a worktree; otherwise it is a
	// directory git forgot about.
	Registered bool
	// Bytes is its disk use (symlinks not followed).
	Bytes int64
}

// Leftovers finds the worktrees of a repository that zwarm made (on a
// zwarm/<id> branch, or a directory under the repository's worktrees
// root named after a session) whose session known does not report;
// known is given the state dir the worktree's owner file names ("" if
// none).
func Leftovers(ctx context.Context, commonDir, root string, known func(id, owner string) bool) ([]Leftover, error) {
	wts, err := listWorktrees(ctx, commonDir)
	if err != nil {
		return nil, err
	}
	var out []Leftover
	seen := map[string]bool{}
	for i, wt := range wts {
		id, ok := strings.CutPrefix(wt.Branch, "refs/heads/zwarm/")
		// Only a worktree zwarm made: named after a session, in the
		// worktrees root or beside an owner file it wrote. Never the
		// repository's own checkout (git lists it first), nor a
		// worktree of yours on a branch you named zwarm/something: they
		// were taken for leftovers, and clean --worktrees deleted them.
		if !ok || i == 0 || wt.Bare || !looksLikeID(id) || filepath.Base(filepath.Clean(wt.Path)) != id ||
			filepath.Dir(filepath.Clean(wt.Path)) != filepath.Clean(root) && trustedOwnerFile(wt.Path) == "" {
			continue
		}
		seen[filepath.Clean(wt.Path)] = true
		if known(id, Owner(wt.Path)) {
			continue
		}
		out = append(out, Leftover{ID: id, Path: wt.Path, Branch: strings.TrimPrefix(wt.Branch, "refs/heads/"), Registered: true, Bytes: DiskUsage(wt.Path)})
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return out, nil // no worktrees were ever made here
	}
	for _, e := range ents {
		name := e.Name()
		if id, ok := strings.CutSuffix(name, ".git"); ok && e.IsDir() && looksLikeID(id) {
			// A worker's repository whose worktree is gone.
			if _, err := os.Lstat(filepath.Join(root, id)); err == nil || known(id, Owner(filepath.Join(root, id))) {
				continue
			}
			name = id
		} else if !e.IsDir() || !looksLikeID(name) {
			continue
		}
		p := filepath.Join(root, name)
		// zwarm writes the owner file before it makes the worktree: a
		// directory without one (a date-named one of yours, a repository
		// of yours) is not zwarm's to remove.
		if seen[p] || trustedOwnerFile(p) == "" || known(name, Owner(p)) {
			continue
		}
		l := Leftover{ID: name, Path: p, Bytes: DiskUsage(p)}
		if own := OwnRepoFor(p); isDir(own) {
			l.Own, l.Bytes = own, l.Bytes+DiskUsage(own)
			_, err := os.Stat(filepath.Join(own, "worktrees", name, "HEAD"))
			l.Registered = err == nil && isDir(p)
		}
		if _, err := (git{dir: commonDir}).run(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+BranchFor(name)); err == nil {
			l.Branch = BranchFor(name)
		}
		out = append(out, l)
	}
	return out, nil
}

// looksLikeID says s has a session id's shape: a UUID, in lower case
// (8-4-4-4-12 hex digits), not any run of hex digits and hyphens (a date).
func looksLikeID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// DiskUsage is the space a tree takes on disk, not following symlinks.
func DiskUsage(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		} else {
			n += info.Size()
		}
		return nil
	})
	return n
}

// Unmerged counts the commits of a branch that no other branch has: work
// that would be lost with it (zwarm's own branches do not count as
// keeping it).
func Unmerged(ctx context.Context, commonDir, branch string) (int, error) {
	out, err := git{dir: commonDir}.line(ctx, "rev-list", "--count", "refs/heads/"+branch, "--not", "--exclude=zwarm/*", "--branches", "--")
	if err != nil {
		return 0, err
	}
	var n int
	_, err = fmt.Sscan(out, &n)
	return n, err
}

// Owner is the state dir a worktree's owner file names, "" if none.
func Owner(path string) string {
	b, err := os.ReadFile(OwnerFile(path))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// TrustedOwner is Owner for finding the state dir from inside a worktree,
// which decides the programs zwarm runs: it reads an owner file only
// beside a linked worktree (its .git a file), and only one this user
// owns that no one else may write. A file planted beside a directory in a
// shared place such as /tmp names nothing.
func TrustedOwner(path string) string {
	if fi, err := os.Lstat(filepath.Join(path, ".git")); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return trustedOwnerFile(path)
}

// trustedOwnerFile is Owner if the owner file is this user's and no one
// else may write it, else "".
func trustedOwnerFile(path string) string {
	fi, err := os.Lstat(OwnerFile(path))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o022 != 0 {
		return ""
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return ""
	}
	return Owner(path)
}

// ErrNotMade is a removal refused because zwarm did not make what a
// record names, or made it for another state dir.
var ErrNotMade = errors.New("zwarm did not make it for this state dir")

// ownedBy refuses (ErrNotMade) a worktree that is there but whose owner
// file, which zwarm writes beside each worktree it makes, does not name
// stateDir: a record changed to name a directory of the user's, or
// another state dir's worktree of the same session id, makes zwarm delete
// nothing. A stateDir of "" asks nothing.
func (w *Worktree) ownedBy(stateDir string) error {
	pfi, perr := os.Lstat(w.Path)
	ofi, oerr := os.Lstat(w.OwnDir)
	if stateDir == "" || errors.Is(perr, fs.ErrNotExist) && (w.OwnDir == "" || errors.Is(oerr, fs.ErrNotExist)) {
		return nil
	}
	// zwarm makes both as directories: a symlink in their place (a worker
	// can plant one, and an owner file beside it, wherever it may write)
	// would have git, and the removal, follow it to a worktree of yours.
	for _, fi := range []fs.FileInfo{pfi, ofi} {
		if fi != nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is left as it is: %w (it is a symlink, where zwarm makes a directory)", filepath.Join(filepath.Dir(w.Path), fi.Name()), ErrNotMade)
		}
	}
	if named := trustedOwnerFile(w.Path); named != "" && sameDir(named, stateDir) {
		return nil
	}
	return fmt.Errorf("%s is left as it is: %w (the file beside it that zwarm writes when it makes a worktree, %s, does not name %s)",
		w.Path, ErrNotMade, OwnerFile(w.Path), stateDir)
}

// sameDir says a and b name one directory, whatever their names.
func sameDir(a, b string) bool {
	fa, aerr := os.Stat(a)
	fb, berr := os.Stat(b)
	return aerr == nil && berr == nil && os.SameFile(fa, fb)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// RemoveLeftover removes the leftover worktree l of repo. Without force,
// what is uncommitted in it goes onto its branch first (what bring, the
// settings' copied and linked files, would bring is left out), a branch
// in the worktree's own repository is fetched into repo's, and a branch
// with commits no other branch has is kept (keep): the disk is freed, the
// work is not lost.
func RemoveLeftover(ctx context.Context, repo *Repo, l *Leftover, bring []string, force bool) (keep bool, err error) {
	w := &Worktree{Path: l.Path, CommonDir: repo.CommonDir, OwnDir: l.Own, Branch: BranchFor(l.ID)}
	if l.Registered && !force && w.Exists() {
		// Its session's record of what was brought along is gone:
		// what the settings would bring is left out instead.
		w.Exclude = w.Untracked(ctx, bring)
		// What is uncommitted in it goes onto its branch first: the
		// disk is freed, the work is not lost.
		if _, _, err := w.Commit(ctx, "zwarm: uncommitted work of a worktree whose session is gone"); err != nil {
			return false, fmt.Errorf("keep the uncommitted work of %s: %w (clean --worktrees --force drops it)", l.Path, err)
		}
		l.Branch = w.Branch
	}
	if l.Own != "" && !force {
		// The worker's branch lives in its own repository, which goes
		// with the worktree: yours gets it first.
		if err := w.Follow(ctx); err != nil {
			return false, fmt.Errorf("keep the branch of %s: %w (clean --worktrees --force drops it)", l.Path, err)
		}
		l.Branch = w.Branch
	}
	if l.Branch != "" && !force {
		n, err := Unmerged(ctx, repo.CommonDir, l.Branch)
		keep = err != nil || n > 0
	}
	if err := w.Remove(ctx, keep); err != nil {
		return false, fmt.Errorf("remove %s: %w", l.Path, err)
	}
	return keep, nil
}

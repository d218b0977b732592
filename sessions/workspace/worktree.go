package workspace

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Worktree is one worker's linked worktree.
type Worktree struct {
	// Path is the worktree's top level.
	Path string
	// CommonDir is your repository's git dir.
	CommonDir string
	// OwnDir is the git dir of the worker's own repository, which the
	// worktree belongs to (own.go); "" for a worktree of your repository
	// itself, as zwarm made them before.
	OwnDir string
	// Branch is the worker's branch, e.g. "zwarm/<session id>".
	Branch string
	// AdminDir is the worktree's own git dir (its HEAD and index), under
	// the worktrees dir of its repository; "" means the one git names
	// after Path.
	AdminDir string
	// Exclude are paths (relative to Path) that were brought along from
	// the caller's checkout: they are never committed.
	Exclude []string
	// Known is the commit zwarm last recorded the branch at ("" if none):
	// where the branch is put back should the worker make it a symbolic
	// ref (pin).
	Known string
	// Undone says what zwarm undid of the worker's doing in the git dir
	// before it wrote there (pin), one line each.
	Undone []string
	// Owner, when set, is the state dir whose session's worktree this is
	// (a record names it): Remove then deletes nothing unless the owner
	// file beside the worktree names that state dir (ownedBy).
	Owner string
}

// BranchFor is the branch of a session's worktree.
func BranchFor(id string) string { return "zwarm/" + id }

// OwnerFile is the file beside a worktree that names the state dir whose
// session it is (state-dir discovery from inside the worktree, and
// leftovers, read it).
func OwnerFile(path string) string { return path + ".state" }

// RemoveSidecars removes the files zwarm keeps beside the worktree at
// path (its owner file, its scan, its sweep), for a worktree that is gone.
func RemoveSidecars(path string) {
	os.Remove(OwnerFile(path))
	forget(path)
	os.Remove(sweptFile(path))
}

// repo runs git on your repository as a whole.
func (w *Worktree) repo() git { return git{dir: w.CommonDir} }

// admin is the worktree's own git dir.
func (w *Worktree) admin() string {
	if w.AdminDir != "" {
		return w.AdminDir
	}
	return filepath.Join(w.own(), "worktrees", filepath.Base(w.Path))
}

// tree runs git in the worktree, pinned to its own git dir and the
// repository's: the worktree's .git file, which its worker may rewrite
// (to point zwarm's git at a repository of its making) or delete (so that
// git would find a repository above the worktree), is never read.
func (w *Worktree) tree() git {
	return git{dir: w.Path, env: []string{"GIT_DIR=" + w.admin(), "GIT_COMMON_DIR=" + w.own(), "GIT_WORK_TREE=" + w.Path}, left: w.leftLocks}
}

// Exists reports whether the worktree is there: its directory, and its
// git dir in the repository.
func (w *Worktree) Exists() bool {
	if fi, err := os.Stat(w.Path); err != nil || !fi.IsDir() {
		return false
	}
	_, err := os.Stat(filepath.Join(w.admin(), "HEAD"))
	return err == nil
}

// repairPointer writes the worktree's .git file again if it no longer
// names the worktree's git dir (its worker rewrote or deleted it), so
// that git run there by a person finds its repository. It reports
// whether it had to.
func (w *Worktree) repairPointer() bool {
	path, want := filepath.Join(w.Path, ".git"), "gitdir: "+w.admin()+"\n"
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) == strings.TrimSpace(want) {
		return false
	}
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return false // a repository of the worker's own making: left alone
	}
	os.Remove(path)
	os.WriteFile(path, []byte(want), 0o644)
	return true
}

// Add makes the worktree, in a repository of the worker's own (own.go),
// on the worker's branch at commit; or, if zwarm/<id> is in your
// repository already (kept after a landing), at that branch as it is.
// zwarm/<id> in your repository is made at the same commit, and the
// commit kept there: the worker's repository borrows its objects from
// yours. Its parent directories are made private: a worktree holds the
// repository's code.
func (w *Worktree) Add(ctx context.Context, commit string) error {
	unlock, err := w.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	g := git{dir: w.CommonDir, writes: true}
	ref := "refs/heads/" + w.Branch
	if tip, err := g.line(ctx, "rev-parse", "--verify", "--quiet", ref); err == nil && tip != "" {
		commit = tip
	} else if _, err := g.run(ctx, "update-ref", "--no-deref", ref, commit, ""); err != nil {
		return fmt.Errorf("make %s: %w", w.Branch, err)
	}
	if err := w.keep(ctx, commit); err != nil {
		return err
	}
	own := OwnRepoFor(w.Path)
	w.OwnDir = own
	if _, err := os.Stat(own); err == nil {
		// Left by a making cut short, or by a worktree removed by hand:
		// what its branch holds is taken into yours before it goes.
		if tip := w.Tip(ctx); tip != "" && tip != commit {
			w.Undone = append(w.Undone, fmt.Sprintf("kept %s, the tip of the worker's repository zwarm makes again, under %s", Abbrev(tip), keepRefs(w.Branch)))
		}
	}
	if err := w.makeOwn(ctx, own, commit); err != nil {
		return err
	}
	if _, err := (git{dir: own, writes: true}).run(ctx, "worktree", "add", "--quiet", "-f", w.Path, w.Branch); err != nil {
		return err
	}
	// The worktree's git dir, as git just wrote it: the one trusted
	// moment to read the .git file.
	b, err := os.ReadFile(filepath.Join(w.Path, ".git"))
	if err != nil {
		return fmt.Errorf("read the new worktree's .git: %w", err)
	}
	admin := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "gitdir:"))
	if !filepath.IsAbs(admin) {
		admin = filepath.Join(w.Path, admin)
	}
	admin = filepath.Clean(admin)
	// git writes the path with its symlinks resolved (a HOME that is a
	// link, /tmp on macOS): the same directory by another name is kept
	// under the name zwarm gave it, which the record must use.
	if filepath.Dir(admin) != filepath.Join(own, "worktrees") && sameDir(filepath.Dir(admin), filepath.Join(own, "worktrees")) {
		admin = filepath.Join(own, "worktrees", filepath.Base(admin))
	}
	if filepath.Dir(admin) != filepath.Join(own, "worktrees") {
		return fmt.Errorf("the new worktree's git dir %s is not in %s", admin, filepath.Join(own, "worktrees"))
	}
	w.AdminDir = admin
	w.settleIndex(ctx)
	return nil
}

// settleIndex has git write a new large worktree's index again once the
// second in which the checkout wrote it is over. git takes a file written
// in the same second as the index for one that may have changed unseen
// ("racily clean") and reads it whole on every look, and on every write
// of a copy, until the index is written in a later second: after a
// checkout, that is every file of its last second, a thousand of them in
// a repository of 20,000, read again by every diff of the first turn and
// by the worker's own git. The wait is a second at most; nothing is lost
// without it but time.
func (w *Worktree) settleIndex(ctx context.Context) {
	index := filepath.Join(w.admin(), "index")
	fi, err := os.Stat(index)
	if err != nil || indexEntries(index) < settleEntries {
		return
	}
	wait := time.Until(fi.ModTime().Truncate(time.Second).Add(time.Second))
	select {
	case <-ctx.Done():
		return
	case <-time.After(min(wait, time.Second)):
	}
	// Exit 1 says some files differ from the index: none should, and the
	// refresh is written all the same.
	g := w.tree()
	g.writes = true
	g.run(ctx, "update-index", "-q", "--refresh")
}

// settleEntries is the size of worktree, in files, from which a new
// index is worth waiting up to a second for (see settleIndex): below it,
// reading again what the checkout wrote in its last second costs less.
const settleEntries = 5000

// indexEntries is the number of entries a git index file holds, read from
// its header ("DIRC", version, count); 0 if it cannot be read.
func indexEntries(path string) uint32 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	var hdr [12]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil || string(hdr[:4]) != "DIRC" {
		return 0
	}
	return binary.BigEndian.Uint32(hdr[8:])
}

// Remove deletes the worktree and, unless keepBranch, its branch. What
// is already gone is not an error: a removal cut short can be repeated.
// A worker's own repository goes with its worktree, once its branch is
// in yours; zwarm/<id> there is deleted only if it holds nothing the
// worker's branch lacks.
func (w *Worktree) Remove(ctx context.Context, keepBranch bool) error {
	if err := w.ownedBy(w.Owner); err != nil {
		return err
	}
	unlock, err := w.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if err := w.pinned(ctx); err != nil {
		return err
	}
	g := git{dir: w.CommonDir, writes: true}
	var tip string
	if w.OwnDir != "" {
		if tip, err = w.removeOwn(ctx); err != nil {
			return err
		}
	} else if _, err := os.Lstat(w.Path); err == nil {
		if _, err := g.run(ctx, "worktree", "remove", "--force", "--force", w.Path); err != nil {
			// git no longer knows it as a worktree (its metadata was
			// pruned): the directory is zwarm's own, and goes.
			if rerr := os.RemoveAll(w.Path); rerr != nil {
				return fmt.Errorf("%w (and removing the directory: %v)", err, rerr)
			}
		}
	}
	if w.OwnDir == "" {
		g.run(ctx, "worktree", "prune")
	}
	RemoveSidecars(w.Path)
	if keepBranch {
		return nil
	}
	ref := "refs/heads/" + w.Branch
	now, _ := g.line(ctx, "rev-parse", "--verify", "--quiet", ref)
	// zwarm moves zwarm/<id> only to commits it kept: at any other, a
	// person committed on it in your repository, and it stays.
	ours := now == "" || w.OwnDir == "" || now == tip
	if !ours {
		_, err := g.run(ctx, "rev-parse", "--verify", "--quiet", keepRefs(w.Branch)+now)
		ours = err == nil
	}
	if err := w.dropKept(ctx); err != nil {
		return err
	}
	switch {
	case now == "":
		return nil
	case !ours:
		w.Undone = append(w.Undone, fmt.Sprintf("kept %s in your repository at %s: a commit made on it there, not by the worker", w.Branch, Abbrev(now)))
		return nil
	}
	if _, err := g.run(ctx, "update-ref", "--no-deref", "-d", ref, now); err != nil {
		return err
	}
	return nil
}

// Bring copies and links what a worker needs from the caller's checkout
// (from) that git does not carry: gitignored files such as .env (copy) or
// node_modules (symlink). Entries are paths relative to the checkout's
// top, or patterns (filepath.Match) matching such paths; one that
// matches nothing is skipped, as is one the worktree already has (git
// tracks it). It returns what it brought, for Exclude, and a line per
// entry for the setup log.
func (w *Worktree) Bring(ctx context.Context, from string, copies, links []string) (brought []string, log []string, err error) {
	do := func(entries []string, what string, fn func(src, dst string) error) error {
		for _, e := range entries {
			rel, err := cleanRel(e)
			if err != nil {
				return fmt.Errorf("[worktrees] %s entry %q: %w", what, e, err)
			}
			matches, err := filepath.Glob(filepath.Join(from, rel))
			if err != nil {
				return fmt.Errorf("[worktrees] %s entry %q: %w", what, e, err)
			}
			if len(matches) == 0 {
				log = append(log, fmt.Sprintf("%s %s: not in %s, skipped", what, rel, from))
			}
			for _, src := range matches {
				r, _ := filepath.Rel(from, src)
				dst := filepath.Join(w.Path, r)
				// A symlinked directory on the way, in the checkout or in
				// the worktree, could lead anywhere: to a secret outside
				// the repository brought in, or a file written outside
				// the worktree. Neither is followed.
				if link, target := symlinkOnTheWay(from, r); link != "" {
					return fmt.Errorf("%s %s: %s in %s is a symlink (to %s), and zwarm brings nothing along through a symlinked directory, "+
						"which could reach outside the repository: name what it points to instead, or remove the entry", what, r, link, from, target)
				}
				if link, target := symlinkOnTheWay(w.Path, r); link != "" {
					return fmt.Errorf("%s %s: %s in the worktree is a symlink (to %s), and zwarm writes nothing through a symlinked directory, "+
						"which could reach outside the worktree: remove the entry", what, r, link, target)
				}
				if _, err := os.Lstat(dst); err == nil {
					if w.tracked(ctx, r) {
						log = append(log, fmt.Sprintf("%s %s: the worktree has it already (git tracks it), left as it is", what, r))
					} else {
						// Brought by an earlier try at making the worktree.
						brought = append(brought, r)
						log = append(log, fmt.Sprintf("%s %s: there already", what, r))
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
					return err
				}
				if err := fn(src, dst); err != nil {
					return fmt.Errorf("%s %s: %w", what, r, err)
				}
				brought = append(brought, r)
				log = append(log, fmt.Sprintf("%s %s", what, r))
			}
		}
		return nil
	}
	if err := do(copies, "copy", copyTree); err != nil {
		return brought, log, err
	}
	if err := do(links, "symlink", func(src, dst string) error { return os.Symlink(src, dst) }); err != nil {
		return brought, log, err
	}
	return brought, log, nil
}

// Untracked returns what Bring's entries match in the worktree that git
// does not track: what Bring would have brought. A worktree whose record
// of what was brought is gone (a leftover of a deleted session) leaves
// these out of its commits instead.
func (w *Worktree) Untracked(ctx context.Context, entries []string) []string {
	var out []string
	for _, e := range entries {
		rel, err := cleanRel(e)
		if err != nil {
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(w.Path, rel))
		for _, m := range matches {
			r, _ := filepath.Rel(w.Path, m)
			if link, _ := symlinkOnTheWay(w.Path, r); link != "" {
				continue // not the worktree's: Bring brings nothing there
			}
			if !w.tracked(ctx, r) && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// tracked reports whether git tracks path (relative to the top) in the
// worktree.
func (w *Worktree) tracked(ctx context.Context, path string) bool {
	out, err := w.tree().run(ctx, "ls-files", "-z", "--", ":(top,literal)"+path)
	return err == nil && out != ""
}

// cleanRel checks that p names something inside a checkout.
func cleanRel(p string) (string, error) {
	p = filepath.Clean(strings.TrimSpace(p))
	switch {
	case p == "" || p == ".":
		return "", errors.New("empty path")
	case filepath.IsAbs(p):
		return "", errors.New("must be relative to the repository's top")
	case p == ".." || strings.HasPrefix(p, "../"):
		return "", errors.New("must stay inside the repository")
	case p == ".git" || strings.HasPrefix(p, ".git/"):
		return "", errors.New(".git is never copied")
	}
	return p, nil
}

// symlinkOnTheWay names the first of rel's parent directories under top
// that is a symlink (relative to top), and what it points to; "" if
// none is. rel itself may be one.
func symlinkOnTheWay(top, rel string) (link, target string) {
	parts := strings.Split(filepath.Clean(rel), string(filepath.Separator))
	p := top
	for _, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return "", ""
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			r, _ := filepath.Rel(top, p)
			return r, target
		}
	}
	return "", ""
}

// ReadIncludeFile reads the patterns of a .worktreeinclude file at the
// top of a checkout: one path or pattern a line, # comments and blank
// lines ignored. A missing file has none; a line naming something outside
// the checkout is an error naming the file and the line.
func ReadIncludeFile(top string) ([]string, error) {
	path := filepath.Join(top, ".worktreeinclude")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		e := strings.TrimSuffix(strings.TrimPrefix(l, "/"), "/")
		if _, err := cleanRel(e); err != nil {
			return nil, fmt.Errorf("%s line %d: %q %w", path, i+1, l, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// copyTree copies a file, a symlink or a directory tree, keeping modes;
// it never follows a symlink and never overwrites.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(to, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			return copyFile(p, to, info.Mode().Perm())
		}
		return nil // sockets, fifos: nothing a worker needs
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW, 0) // swapped for a symlink meanwhile: refused
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := out.ReadFrom(in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

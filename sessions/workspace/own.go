package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A worker's repository of its own.
//
// A worker's own git must write objects and its branch to commit, and a
// sandbox (codex's workspace-write) can only be given directories. Were
// those the directories of your repository, a worker could delete the
// objects your branches need, or move another worker's branch. So each
// worktree zwarm makes belongs to a repository made for its worker alone,
// beside it (<worktree>.git):
//
//   - its objects borrow yours read-only (objects/info/alternates names
//     your objects directory, which is never writable to the worker): it
//     starts at once and takes no space, yet everything it writes goes to
//     its own objects;
//   - its config is zwarm's (it includes yours, then switches off what
//     must not apply to a worker's repository) and not writable to the
//     worker, like the rest of its git dir but for its objects, its
//     zwarm/ branches and their logs, and its worktree's own git dir;
//   - your branches, tags and remote branches are copied into it, read
//     only, when it is made, so the worker can still name them
//     ("git diff main...");
//   - each commit zwarm takes from it (a turn's, a branch tip a person
//     committed by hand, a snapshot for a dry run) is fetched into your
//     repository, checked as transfer.fsckObjects checks a push, and kept
//     under refs/zwarm/<id>/ there; zwarm/<id> in your repository follows
//     the worker's branch, moved by zwarm alone.
//
// Nothing in the worker's repository is taken as truth about yours: your
// object store and refs are written by zwarm's own git only, which fetches
// from the worker's repository as from any untrusted one (git upload-pack
// is built to serve a repository it does not trust).
//
// Worktrees made before there were such repositories are linked worktrees
// of your repository itself (OwnDir ""): everything here then acts on
// your repository, as it always did.

// OwnRepoFor is the git dir of the repository made for the worker whose
// worktree is at path.
func OwnRepoFor(path string) string { return filepath.Clean(path) + ".git" }

// own is the git dir of the repository the worktree belongs to: the
// worker's own, or yours for a worktree made before there were such.
func (w *Worktree) own() string {
	if w.OwnDir != "" {
		return w.OwnDir
	}
	return w.CommonDir
}

// ownRepo runs git on the worker's repository as a whole.
func (w *Worktree) ownRepo() git { return git{dir: w.own()} }

// makeOwn makes the worker's repository at dir, with its branch at start
// (a commit of yours). What an earlier try left there goes first: it was
// never worked in (a worktree in use is never made again).
func (w *Worktree) makeOwn(ctx context.Context, dir, start string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove what an earlier try left at %s: %w", dir, err)
	}
	format, err := w.repo().line(ctx, "rev-parse", "--show-object-format")
	if err != nil {
		return fmt.Errorf("read your repository's object format: %w", err)
	}
	args := []string{"init", "--quiet", "--bare", "--template="}
	if format != "" && format != "sha1" {
		args = append(args, "--object-format="+format)
	}
	if _, err := (git{writes: true}).run(ctx, append(args, dir)...); err != nil {
		return fmt.Errorf("make the worker's repository: %w", err)
	}
	made, err := os.ReadFile(filepath.Join(dir, "config"))
	if err != nil {
		return fmt.Errorf("make the worker's repository: %w", err)
	}
	// Your config first, so that git behaves for the worker as it does for
	// you (attributes' filters, line endings, identity); then what git
	// init wrote (the repository's format, bare) and zwarm's own, which
	// come later and so win.
	cfg := fmt.Sprintf("[include]\n\tpath = %s\n%s", quoteConfig(filepath.Join(w.CommonDir, "config")), made) +
		"[extensions]\n" +
		// A worktree's config.worktree lies in its git dir, which the
		// worker may write: never read.
		"\tworktreeConfig = false\n" +
		"[gc]\n\tauto = 0\n" +
		"[maintenance]\n\tauto = false\n" +
		"[uploadpack]\n" +
		// zwarm fetches commits by id, some on no branch (a snapshot).
		"\tallowAnySHA1InWant = true\n"
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(cfg), 0o644); err != nil {
		return fmt.Errorf("write the worker's repository's config: %w", err)
	}
	info := filepath.Join(dir, "objects", "info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(info, "alternates"), []byte(filepath.Join(w.CommonDir, "objects")+"\n"), 0o644); err != nil {
		return fmt.Errorf("borrow your objects: %w", err)
	}
	if err := w.copyRefs(ctx, dir); err != nil {
		return err
	}
	g := git{dir: dir, writes: true}
	if _, err := g.run(ctx, "update-ref", "--no-deref", "refs/heads/"+w.Branch, start, ""); err != nil {
		return fmt.Errorf("make the worker's branch: %w", err)
	}
	return nil
}

// copyRefs writes your branches, tags and remote branches (zwarm's
// workers' branches aside) into the packed refs of the worker's
// repository at dir, a file the worker cannot write: it may name them,
// not move them.
func (w *Worktree) copyRefs(ctx context.Context, dir string) error {
	out, err := w.repo().run(ctx, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/", "refs/tags/", "refs/remotes/")
	if err != nil {
		return fmt.Errorf("read your branches: %w", err)
	}
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		if l == "" || strings.Contains(l, " refs/heads/zwarm/") {
			continue
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "packed-refs"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("copy your branches to the worker's repository: %w", err)
	}
	return nil
}

// quoteConfig quotes a value for a git config file.
func quoteConfig(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// bring makes commit, made in the worker's repository, one of yours:
// fetched (its objects checked) and kept under refs/zwarm/<id>/, where
// gc keeps it and no worker can reach it. A commit you have already is
// only kept.
func (w *Worktree) bring(ctx context.Context, commit string, fresh bool) error {
	if commit == "" {
		return nil
	}
	// A commit zwarm has just made in the worker's repository (fresh) is
	// not one of yours yet: nothing to ask.
	if w.OwnDir == "" || !fresh && CommitExists(ctx, w.CommonDir, commit) {
		return w.keep(ctx, commit)
	}
	if err := w.fetch(ctx, commit, keepRefs(w.Branch)+commit); err != nil {
		// Another zwarm taking the same commit at the same moment holds
		// the ref's lock: what counts is that it is yours now.
		if CommitExists(ctx, w.CommonDir, commit) {
			return w.keep(ctx, commit)
		}
		return fmt.Errorf("take the worker's commit %s into your repository: %w", Abbrev(commit), err)
	}
	return nil
}

// fetch fetches commit from the worker's repository into yours, its
// objects checked, to the ref into ("" for none: the objects alone).
func (w *Worktree) fetch(ctx context.Context, commit, into string) error {
	spec := commit
	if into != "" {
		spec = "+" + commit + ":" + into
	}
	g := git{dir: w.CommonDir, writes: true}
	_, err := g.run(ctx, "-c", "fetch.fsckObjects=true", "-c", "protocol.file.allow=always",
		"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
		"--", w.OwnDir, spec)
	return err
}

// follow brings head, the worker's branch now, into your repository and
// moves zwarm/<id> there to it. It moves the branch only forward and
// only while no checkout of yours has it: a commit made on it in your
// repository is never dropped, and a checkout's files never change under
// it. What it left as it is goes to w.Undone.
func (w *Worktree) follow(ctx context.Context, head string) error {
	if w.OwnDir != "" && w.followed(ctx, head) {
		return nil
	}
	return w.followMade(ctx, head, "")
}

// followed says whether your repository has head kept and zwarm/<id> at
// it already, as after the turn's commit that made head: what a diff or
// a show of a settled worker finds, with one read of your refs rather
// than the three of following it again.
func (w *Worktree) followed(ctx context.Context, head string) bool {
	branch, kept := "refs/heads/"+w.Branch, keepRefs(w.Branch)+head
	out, err := git{dir: w.CommonDir}.run(ctx, "for-each-ref", "--format=%(objectname) %(refname)", branch, kept)
	if err != nil {
		return false
	}
	return strings.Contains(out, head+" "+branch+"\n") && strings.Contains(out, head+" "+kept+"\n")
}

// followMade is follow of head, a commit zwarm has just made on parent in
// the worker's repository (parent "" when head is not one): your branch
// at parent is behind it, with nothing to ask.
func (w *Worktree) followMade(ctx context.Context, head, parent string) error {
	if err := w.bring(ctx, head, parent != ""); err != nil || w.OwnDir == "" {
		return err
	}
	return w.moveYours(ctx, head, parent, w.yourBranch(ctx), func() bool { return w.checkedOutInYours(ctx) }, false)
}

// yourBranch is the commit zwarm/<id> is at in your repository, "" when
// it is not there.
func (w *Worktree) yourBranch(ctx context.Context) string {
	now, _ := git{dir: w.CommonDir}.line(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+w.Branch)
	return now
}

// followTurn is followMade of head, the turn's commit zwarm has just made
// on parent, while the worker's branch is moved to it (moved waits for
// that, moveHead). Meanwhile the commit's objects are fetched into your
// repository, and where your branch is there is read, which the move
// writes neither of. Only once the worker's branch has the commit is it
// kept in your repository and your branch moved to it: kept, and on no
// branch, it would read as a turn's work the worker moved its branch off
// (KeptOff). The error of the move itself is moved's.
func (w *Worktree) followTurn(ctx context.Context, head, parent string, moved func() error) error {
	if w.OwnDir == "" {
		if err := moved(); err != nil {
			return err
		}
		return w.keep(ctx, head)
	}
	var checkedOut bool
	read := beside(func() (string, error) {
		now := w.yourBranch(ctx)
		checkedOut = now != "" && now != head && w.checkedOutInYours(ctx)
		return now, nil
	})
	taken := w.fetch(ctx, head, "")
	now, _ := read()
	if err := moved(); err != nil {
		return err
	}
	if taken != nil && !CommitExists(ctx, w.CommonDir, head) {
		return fmt.Errorf("take the worker's commit %s into your repository: %w", Abbrev(head), taken)
	}
	return w.moveYours(ctx, head, parent, now, func() bool { return checkedOut }, true)
}

// moveYours moves zwarm/<id> in your repository from now to head, only
// forward and only while no checkout of yours has it (follow), and, with
// keep, keeps head there in the same transaction. What it left as it is
// goes to w.Undone.
func (w *Worktree) moveYours(ctx context.Context, head, parent, now string, checkedOut func() bool, keep bool) error {
	ref := "refs/heads/" + w.Branch
	move := false
	switch {
	case now == head:
	case now != "" && now != parent && !IsAncestor(ctx, w.CommonDir, now, head):
		w.Undone = append(w.Undone, fmt.Sprintf("left %s in your repository at %s: it holds commits the worker's branch (%s) lacks", w.Branch, Abbrev(now), Abbrev(head)))
	case now != "" && checkedOut():
		w.Undone = append(w.Undone, fmt.Sprintf("left %s in your repository at %s: a checkout of yours has it", w.Branch, Abbrev(now)))
	default:
		move = true
	}
	var tx strings.Builder
	if keep {
		fmt.Fprintf(&tx, "update %s %s\n", keepRefs(w.Branch)+head, head)
	}
	if move {
		// An old value of zeros: the branch must not be there yet.
		fmt.Fprintf(&tx, "update %s %s %s\n", ref, head, cmp.Or(now, strings.Repeat("0", len(head))))
	}
	if tx.Len() == 0 {
		return nil
	}
	g := git{dir: w.CommonDir, writes: true, left: w.leftLocks, stdin: strings.NewReader(tx.String())}
	if keep {
		g.left = w.keptLocks(head)
	}
	_, err := g.run(ctx, "update-ref", "--no-deref", "-m", "zwarm: the worker's branch", "--stdin")
	if err == nil {
		return nil
	}
	// Moved meanwhile, by another zwarm following the same branch (a diff
	// while the turn's commit is made) or by a person, or its lock held by
	// a git at work: the commit is kept all the same, and the branch left
	// as it is now.
	if keep {
		if err := w.keep(ctx, head); err != nil {
			return err
		}
	}
	g.stdin = nil
	switch again, _ := g.line(ctx, "rev-parse", "--verify", "--quiet", ref); {
	case !move || again == head:
	case again == now:
		w.Undone = append(w.Undone, fmt.Sprintf("left %s in your repository at %s: zwarm could not move it to %s: %v", w.Branch, Abbrev(now), Abbrev(head), err))
	default:
		w.Undone = append(w.Undone, fmt.Sprintf("left %s in your repository at %s: it moved while zwarm moved it to %s", w.Branch, Abbrev(again), Abbrev(head)))
	}
	return nil
}

// checkedOutInYours reports whether a checkout of your repository has the
// worker's branch checked out.
func (w *Worktree) checkedOutInYours(ctx context.Context) bool {
	wts, err := listWorktrees(ctx, w.CommonDir)
	if err != nil {
		return true // cannot tell: as if it were
	}
	for _, wt := range wts {
		if wt.Branch == "refs/heads/"+w.Branch {
			return true
		}
	}
	return false
}

// removeOwn deletes the worker's repository and its worktree's files,
// after its branch's tip is brought into your repository (and zwarm/<id>
// there moved to it), so that no commit goes with it. It returns that
// tip ("" if the repository holds none zwarm can read).
func (w *Worktree) removeOwn(ctx context.Context) (string, error) {
	// A branch zwarm cannot take (the worker destroyed its own objects)
	// does not keep the rest from going: the callers refuse a removal
	// that would drop work never landed, unless forced.
	tip := w.Tip(ctx)
	for _, p := range []string{w.Path, w.OwnDir} {
		if err := os.RemoveAll(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return tip, fmt.Errorf("remove %s: %w", p, err)
		}
	}
	return tip, nil
}

// followHead is the worktree's HEAD after zwarm moved the worker's branch
// there (a rebase, a merge), followed in your repository.
func (w *Worktree) followHead(ctx context.Context) (string, error) {
	head, err := w.Head(ctx)
	if err != nil {
		return "", err
	}
	return head, w.follow(ctx, head)
}

// Follow brings the worker's branch as it is now into your repository and
// moves zwarm/<id> there to it (see follow): what a person reads in your
// repository, and what counts as unmerged, is then the worker's work.
func (w *Worktree) Follow(ctx context.Context) error {
	if w.OwnDir == "" {
		return nil
	}
	_, err := w.tip(ctx, "")
	return err
}

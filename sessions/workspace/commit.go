package workspace

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Stat is the size of a change: files touched, lines added and deleted
// (binary files count as touched, with no lines).
type Stat struct {
	Files   int `json:"files"`
	Added   int `json:"added"`
	Deleted int `json:"deleted"`
}

// Empty reports whether the change touches nothing.
func (s Stat) Empty() bool { return s.Files == 0 }

// String is "+120 -8 in 5 files". It is every listed session's CHANGES
// cell: one allocation, where fmt made two.
func (s Stat) String() string {
	b := make([]byte, 0, 48)
	b = append(b, '+')
	b = strconv.AppendInt(b, int64(s.Added), 10)
	b = append(b, " -"...)
	b = strconv.AppendInt(b, int64(s.Deleted), 10)
	b = append(b, " in "...)
	b = strconv.AppendInt(b, int64(s.Files), 10)
	if s.Files == 1 {
		b = append(b, " file"...)
	} else {
		b = append(b, " files"...)
	}
	return string(b)
}

// StateDirName is zwarm's state dir in a checkout. A worker's change to
// it is never committed: landed, it would put settings zwarm runs (a
// setup command) into the repository.
const StateDirName = ".zwarm"

// pathspec is "everything but what was brought along, and zwarm's state
// dirs", from the top. A .zwarm at any depth is left out: zwarm takes the
// nearest one above where it runs for its state dir, so a subdirectory's
// is one too. Brought paths that .gitignore already keeps out are not
// named: git add refuses a literal pathspec, even an excluding one, that
// names an ignored file (a glob is not refused).
func (w *Worktree) pathspec(ctx context.Context) ([]string, error) {
	spec := []string{"--", ":/", ":(top,exclude,glob)**/" + StateDirName, ":(top,exclude,glob)**/" + StateDirName + "/**"}
	var candidates []string
	for _, e := range append([]string{StateDirName}, w.Exclude...) {
		// Beyond a symlinked directory (the worker made one where a
		// brought directory was) git tracks nothing, and refuses a
		// pathspec naming it; and a path that is not there has nothing
		// to leave out (nor anything to ask check-ignore about).
		if link, _ := symlinkOnTheWay(w.Path, e); link == "" && exists(filepath.Join(w.Path, e)) {
			candidates = append(candidates, e)
		}
	}
	ignored, err := ignoredOf(ctx, w.tree(), candidates)
	if err != nil {
		return nil, err
	}
	for _, e := range candidates {
		if !ignored[e] {
			spec = append(spec, ":(top,exclude,literal)"+e)
		}
	}
	return spec, nil
}

// exists says whether there is anything at path, a broken symlink
// included.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// ignoredOf says which of paths an ignore rule keeps out, as git
// check-ignore run by g answers (with --no-index among g's arguments, a
// path still in the index is judged by the rules alone).
func ignoredOf(ctx context.Context, g git, paths []string, args ...string) (map[string]bool, error) {
	ignored := map[string]bool{}
	if len(paths) == 0 {
		return ignored, nil
	}
	g.stdout, g.stdin = nil, strings.NewReader(strings.Join(paths, "\x00")+"\x00")
	out, err := g.run(ctx, append(append([]string{"check-ignore"}, args...), "--stdin", "-z")...)
	if err != nil && exitCodeOf(err) != 1 { // 1: none is ignored
		return nil, fmt.Errorf("check what .gitignore keeps out: %w", err)
	}
	for _, p := range splitZ(out) {
		ignored[p] = true
	}
	return ignored, nil
}

// leftOut says whether path (as git lists it, "dir/" for a directory)
// is one w.pathspec leaves out: a state dir at any depth or what is in
// one, or what was brought along, or is below it. Lists of paths named
// to git literally are filtered with it (untrackedWithin says why).
func (w *Worktree) leftOut(path string) bool {
	path = strings.TrimSuffix(path, "/")
	for part := range strings.SplitSeq(path, "/") {
		if part == StateDirName {
			return true
		}
	}
	for _, e := range w.Exclude {
		e = strings.TrimSuffix(filepath.ToSlash(e), "/")
		if path == e || strings.HasPrefix(path, e+"/") {
			return true
		}
	}
	return false
}

// literally is paths as a pathspec for --pathspec-from-file
// --pathspec-file-nul, each taken literally, from the top.
func literally(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		// A literal "dir/" matches nothing: "dir" matches it and below.
		b.WriteString(":(top,literal)" + strings.TrimSuffix(p, "/") + "\x00")
	}
	return b.String()
}

// add stages everything but what was brought along, with git g. The
// worktree is read once, by git status: what it lists (a repository of
// the worker's own among it refuses the whole), and only that, is then
// staged. In a large repository a second walk of every file, which git
// add -A alone would make, costs as much as the first. Unless began is
// zero (the moment before g's index was copied from the worktree's),
// what git status found untracked is remembered for a later diff
// (scan.go).
func (w *Worktree) add(ctx context.Context, g git, began time.Time) error {
	ch, err := w.status(ctx, g, began)
	if err != nil {
		return err
	}
	return w.stage(ctx, g, ch)
}

// status is what add stages, as git g's status lists it: a repository of
// the worker's own among it is a *NestedRepoError.
func (w *Worktree) status(ctx context.Context, g git, began time.Time) (statusChanges, error) {
	spec, err := w.pathspec(ctx)
	if err != nil {
		return statusChanges{}, err
	}
	ch, nested, err := w.changed(ctx, g, spec, !began.IsZero())
	if err != nil || nested != nil {
		if nested != nil {
			return ch, nested
		}
		return ch, err
	}
	if !began.IsZero() {
		if len(ch.deleted) > 0 || ch.unmerged {
			// A diff of the worktree as it is would not read these as
			// staging them does: such a worktree is always walked.
			forget(w.Path)
		} else {
			w.remember(ctx, g, began, spec, ch)
		}
	}
	return ch, nil
}

// stage stages what status found, with git g.
func (w *Worktree) stage(ctx context.Context, g git, ch statusChanges) error {
	// What git tracks, by path: update-index takes a file changed or
	// added (with the attributes' filters, as add does) and drops one
	// deleted, and, unlike add, does not refuse a tracked file that an
	// ignore rule matches (a worker's git add -f).
	for _, set := range []struct {
		paths []string
		flags []string
	}{{ch.tracked, []string{"--add", "--remove"}}, {ch.deleted, []string{"--force-remove"}}} {
		if len(set.paths) == 0 {
			continue
		}
		u := g
		u.stdin = strings.NewReader(strings.Join(set.paths, "\x00") + "\x00")
		if _, err := u.run(ctx, append(append([]string{"update-index"}, set.flags...), "-z", "--stdin")...); err != nil {
			return err
		}
	}
	if len(ch.untracked) == 0 {
		return nil // and never an empty list, which would stage everything
	}
	// What git does not track, literally: an untracked directory whole
	// ("dir/") when nothing in it is left out (changed).
	g.stdin = strings.NewReader(literally(ch.untracked))
	_, err := g.run(ctx, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul")
	return err
}

// UnfinishedError says the worktree holds an operation only the worker
// (or a person) can finish: a rebase stopped halfway, or a merge with
// files still in conflict. Nothing was committed.
type UnfinishedError struct {
	What   string   // "rebase", "merge"
	Files  []string // the files still in conflict
	Branch string   // the worker's, zwarm/<session id>
}

func (e *UnfinishedError) Error() string {
	id := shortID(e.Branch)
	if len(e.Files) == 0 {
		return fmt.Sprintf("a %s is in progress in the worktree: the worker has to finish or abort it (zwarm inject %s \"finish the %s, or abort it\")", e.What, id, e.What)
	}
	files := strings.Join(e.Files, ", ")
	return fmt.Sprintf("a %s is in progress in the worktree with %s still in conflict: the worker has to resolve them (zwarm inject %s \"resolve the conflicts in %s, and git add them\")",
		e.What, files, id, files)
}

// Commit records everything the worker left uncommitted in the worktree
// as one commit on its branch, by zwarm, with the user's hooks off; what
// was brought along, and zwarm's state dir, are left out. It returns the
// worktree's HEAD after it and whether it made a commit: nothing
// uncommitted, nothing made. A worker's own commits stay as they are.
//
// The commit goes on the worker's branch whatever the worker checked out
// (another branch, a detached HEAD), and no other branch moves: the work
// is what the worktree holds. In the middle of a merge (zwarm update, or
// the worker's own), the commit concludes it once every file in conflict
// is resolved: added by the worker, or a text file without conflict
// markers left; otherwise, and in the middle of a rebase, nothing is
// committed and an *UnfinishedError says why.
func (w *Worktree) Commit(ctx context.Context, message string) (head string, made bool, err error) {
	ref, err := w.readyToRead(ctx)
	if err != nil {
		return "", false, err
	}
	g := w.tree()
	g.writes, g.zwarm = true, true
	// What is to be staged is read beside the files in conflict: git
	// status writes nothing, and what it lists depends on the commit HEAD
	// is on, which ontoBranch keeps (but from a branch with no commit),
	// not on its branch.
	conflicts := beside(func() ([]string, error) { return w.Unmerged(ctx) })
	ch, serr := w.status(ctx, g, time.Time{})
	if err := w.unresolved(conflicts()); err != nil {
		return "", false, err
	}
	// HEAD goes back on the worker's branch before anything else is
	// refused (a repository of the worker's own among what is staged).
	newCommit, err := w.ontoBranch(ctx, g, ref)
	if err != nil {
		return "", false, err
	}
	if newCommit {
		ch, serr = w.status(ctx, g, time.Time{}) // against that commit
	}
	if serr == nil {
		serr = w.stage(ctx, g, ch)
	}
	if serr != nil {
		return "", false, fmt.Errorf("stage the worker's changes: %w", serr)
	}
	if w.merging() {
		// git commit concludes the merge (its second parent, its state
		// files gone).
		if _, err := g.run(ctx, "commit", "--quiet", "--no-verify", "--allow-empty", "-m", message); err != nil {
			return "", false, fmt.Errorf("commit the worker's changes: %w", err)
		}
		if head, err = w.Head(ctx); err != nil {
			return "", false, err
		}
		return head, true, w.follow(ctx, head)
	}
	commit, parent, err := commitIndex(ctx, g, "HEAD", message)
	switch {
	case err != nil:
		return "", false, fmt.Errorf("commit the worker's changes: %w", err)
	case commit == parent:
		// Nothing uncommitted; the worker's own commits, if any, are
		// taken all the same.
		return parent, false, w.follow(ctx, parent)
	}
	moved := moveHead(ctx, g, commit, parent, message)
	var moveErr error
	err = w.followTurn(ctx, commit, parent, func() error { moveErr = moved(); return moveErr })
	if moveErr != nil {
		return "", false, moveErr // nothing committed: the branch is where it was
	}
	return commit, true, err
}

// moveHead starts moving HEAD's branch from parent to commit, which
// commitIndex made, and returns what waits for the move. With commitIndex
// it is what git commit does outside a merge, with git's plumbing: git
// commit would first read every file's metadata again (the index's
// refresh), which git status has just done, and in a repository of 20,000
// files that is most of its time. The commit is fetched into your
// repository meanwhile (followTurn), and a lock file the move runs into
// is judged once it has been (unjudged).
func moveHead(ctx context.Context, g git, commit, parent, message string) (wait func() error) {
	// Through HEAD, as git commit moves the branch: both reflogs say so,
	// and a branch moved meanwhile is not overwritten.
	subject, _, _ := strings.Cut(message, "\n")
	args := []string{"update-ref", "-m", "commit: " + subject, "HEAD", commit, parent}
	moved := beside(func() (string, error) { return g.unjudged().run(ctx, args...) })
	return func() error {
		_, err := moved()
		if err != nil && g.left != nil {
			_, err = g.run(ctx, args...)
		}
		if err != nil {
			return fmt.Errorf("commit the worker's changes: %w", err)
		}
		return nil
	}
}

// keepRefs is where zwarm keeps every commit it made of a worker's turn,
// under a ref of its own that no sandboxed worker can write (only its
// branch's dir is writable to it): whatever the worker does to its branch
// afterwards (reset, delete), the turn's commit stays reachable, and git
// gc keeps it, until the session's worktree is removed.
func keepRefs(branch string) string {
	return "refs/zwarm/" + strings.TrimPrefix(branch, "zwarm/") + "/"
}

// keep keeps commit under keepRefs.
func (w *Worktree) keep(ctx context.Context, commit string) error {
	g := w.repo()
	g.writes, g.left = true, w.keptLocks(commit)
	if _, err := g.run(ctx, "update-ref", "--no-deref", keepRefs(w.Branch)+commit, commit); err != nil {
		return fmt.Errorf("keep the turn's commit %s: %w", Abbrev(commit), err)
	}
	return nil
}

// dropKept deletes the refs keep made for the worktree's branch.
func (w *Worktree) dropKept(ctx context.Context) error {
	g := w.repo()
	out, err := g.run(ctx, "for-each-ref", "--format=delete %(refname)", keepRefs(w.Branch))
	if err != nil || strings.TrimSpace(out) == "" {
		return err
	}
	g.writes, g.stdin = true, strings.NewReader(out)
	_, err = g.run(ctx, "update-ref", "--stdin")
	return err
}

// readyToRead makes the worktree safe for zwarm's git to read (Restore)
// and returns the branch its HEAD is on ("" for a detached HEAD). The
// sweep reads the worktree's directories, and what is asked of git until
// it ends reads the git dirs alone: the two go side by side.
func (w *Worktree) readyToRead(ctx context.Context) (ref string, err error) {
	if err := w.restoreGit(ctx); err != nil {
		return "", err
	}
	swept := beside(func() ([]string, error) { return w.sweepSpecial() })
	ref, err = w.midway(ctx)
	removed, serr := swept()
	w.Undone = append(w.Undone, removed...)
	if serr != nil {
		return "", serr
	}
	w.repairPointer()
	return ref, err
}

// unresolved is an *UnfinishedError for those of files, the files in
// conflict in the index, not resolved by their content; err is that of
// reading them.
func (w *Worktree) unresolved(files []string, err error) error {
	if err != nil {
		return err
	}
	var left []string
	for _, f := range files {
		if !resolvedByContent(filepath.Join(w.Path, f)) {
			left = append(left, f)
		}
	}
	if len(left) > 0 {
		return &UnfinishedError{What: "merge", Files: left, Branch: w.Branch}
	}
	return nil
}

// midway is what a turn's commit asks of the worktree's git dir before
// it reads the worktree: the branch HEAD is on ("" for a detached HEAD).
// A rebase stopped halfway is an *UnfinishedError.
func (w *Worktree) midway(ctx context.Context) (ref string, err error) {
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(w.admin(), d)); err == nil {
			return "", &UnfinishedError{What: "rebase", Branch: w.Branch}
		}
	}
	// From the git dir, not the worktree: the sweep beside it may yet
	// have to make the worktree's top one git can enter (a worker left it
	// 0600).
	g := w.tree()
	g.dir = w.admin()
	ref, err = g.line(ctx, "symbolic-ref", "--quiet", "HEAD")
	if exitCodeOf(err) == 1 {
		return "", nil // a detached HEAD
	}
	return ref, err
}

// ontoBranch makes sure the commit to come goes on the worker's branch,
// with ref the branch HEAD is on ("" for a detached HEAD). A worker that
// checked out another branch, or detached HEAD, had its work there: the
// worker's branch is moved to that commit (no other branch moves), and
// HEAD put back on it, the worktree and index as they are. newCommit
// says HEAD is on another commit than before (it was on a branch with no
// commit).
func (w *Worktree) ontoBranch(ctx context.Context, g git, ref string) (newCommit bool, err error) {
	if ref == "refs/heads/"+w.Branch {
		return false, nil
	}
	cur, err := g.line(ctx, "rev-parse", "--verify", "HEAD")
	if err != nil && ref != "" {
		if _, uerr := g.line(ctx, "rev-parse", "--verify", "--quiet", ref); uerr != nil {
			// A branch with no commit yet (git symbolic-ref HEAD, git
			// checkout --orphan): nothing to move the worker's branch
			// to. HEAD goes back on it, the files as they are, which the
			// commit to come takes: HEAD is on a commit now.
			_, err = g.run(ctx, "symbolic-ref", "HEAD", "refs/heads/"+w.Branch)
			return true, err
		}
	}
	if err != nil {
		return false, err
	}
	if _, err := g.run(ctx, "update-ref", "--no-deref", "-m", "zwarm: the worker's work, from "+cmp.Or(ref, "a detached HEAD"), "refs/heads/"+w.Branch, cur); err != nil {
		return false, err
	}
	_, err = g.run(ctx, "symbolic-ref", "HEAD", "refs/heads/"+w.Branch)
	return false, err
}

// resolvedByContent reports whether a file in conflict reads as resolved:
// a text file without conflict markers. A binary file, or one deleted on
// one side, says nothing by its content: the worker marks it resolved
// (git add, git rm).
func resolvedByContent(path string) bool {
	text, markers := scanConflict(path)
	return text && !markers
}

// merging reports whether a merge waits to be concluded in the worktree.
func (w *Worktree) merging() bool {
	_, err := os.Stat(filepath.Join(w.admin(), "MERGE_HEAD"))
	return err == nil
}

// WritableGitDirs are the parts of the worker's repository's git dir its
// own git must write to commit on its branch: the objects, the zwarm
// branches and their logs, and the worktree's own git dir (its index and
// HEAD). Other refs, hooks and config are not among them, nor anything of
// your repository (for a worktree made before workers had repositories of
// their own, these are parts of yours, objects included). An
// agent that sandboxes its commands (codex's workspace-write) is given
// these as writable roots. The zwarm branches' dirs are made if missing:
// git pack-refs (run by gc) removes a dir whose refs it packed, and a
// sandboxed git could not make it again.
func (w *Worktree) WritableGitDirs() []string {
	out := []string{w.admin()}
	for _, d := range []string{"objects", "refs/heads/zwarm", "logs/refs/heads/zwarm"} {
		p := filepath.Join(w.own(), d)
		if d != "objects" {
			os.MkdirAll(p, 0o755) // best effort: a root that is missing is left out below
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

// Head is the commit the worktree has checked out.
func (w *Worktree) Head(ctx context.Context) (string, error) {
	return w.tree().line(ctx, "rev-parse", "--verify", "HEAD")
}

// FileStat is one file's share of a change.
type FileStat struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Binary  bool   `json:"binary,omitempty"`
}

// Changes returns what changed between two commits, file by file, and
// the sum.
func (w *Worktree) Changes(ctx context.Context, from, to string) ([]FileStat, Stat, error) {
	out, err := w.repo().run(ctx, append(numstat, from, to, "--")...)
	if err != nil {
		return nil, Stat{}, err
	}
	return parseNumstat(out)
}

// numstat counts a change file by file. A file over 32 MiB counts as
// binary, touched with no lines, as git counts one over its
// core.bigFileThreshold (512 MiB by default): counting its lines would
// read it whole, twice over, and a 150 MB binary file would double the
// memory a landing needs.
var numstat = []string{"-c", "core.bigFileThreshold=32m", "diff", "--no-ext-diff", "--no-renames", "--numstat", "-z"}

// parseNumstat reads `git diff --numstat -z --no-renames`: for each file
// "ADDED\tDELETED\tPATH\0", with "-" for the counts of a binary file.
func parseNumstat(out string) ([]FileStat, Stat, error) {
	var files []FileStat
	var sum Stat
	for _, rec := range splitZ(out) {
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 {
			return nil, Stat{}, fmt.Errorf("unexpected git diff --numstat output %q", rec)
		}
		f := FileStat{Path: parts[2]}
		if parts[0] == "-" {
			f.Binary = true
		} else {
			f.Added, _ = strconv.Atoi(parts[0])
			f.Deleted, _ = strconv.Atoi(parts[1])
		}
		files = append(files, f)
		sum.Files++
		sum.Added += f.Added
		sum.Deleted += f.Deleted
	}
	return files, sum, nil
}

// Unmerged lists the files with unresolved conflicts in the worktree's
// index, from the index alone: no file of the worktree is read.
func (w *Worktree) Unmerged(ctx context.Context) ([]string, error) {
	out, err := w.tree().run(ctx, "ls-files", "--unmerged", "-z")
	if err != nil {
		return nil, err
	}
	var files []string
	for _, rec := range splitZ(out) {
		// "<mode> <object> <stage>\t<path>", one record per stage.
		if _, f, ok := strings.Cut(rec, "\t"); ok && !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	return files, nil
}

// WithMarkers returns those of files (relative to the worktree's top)
// that still hold conflict markers: a conflict the worker has not
// resolved, even if it was committed.
func (w *Worktree) WithMarkers(files []string) []string {
	var out []string
	for _, f := range files {
		if hasMarkers(filepath.Join(w.Path, f)) {
			out = append(out, f)
		}
	}
	return out
}

func hasMarkers(path string) bool {
	_, markers := scanConflict(path)
	return markers
}

// maxConflictScan is how much of a file in conflict is read for markers:
// a text file a person could resolve by hand is far smaller, and a worker
// may have left one of any size (a sparse file of terabytes takes no disk).
const maxConflictScan = 64 << 20

// scanConflict reads a file of the worktree for conflict markers without
// trusting what is at the path (openPlain): text says it is a regular
// file of at most maxConflictScan bytes, none of them NUL; markers that
// an opening marker line is followed by a closing one.
func scanConflict(path string) (text, markers bool) {
	f, fi, err := openPlain(path)
	if err != nil {
		return false, false
	}
	defer f.Close()
	if fi.Size() > maxConflictScan {
		return false, false
	}
	sc := bufio.NewScanner(io.LimitReader(f, maxConflictScan))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	open := false
	for sc.Scan() {
		l := sc.Bytes()
		switch {
		case bytes.IndexByte(l, 0) >= 0:
			return false, false // binary: its content says nothing
		case len(l) >= 8 && string(l[:8]) == "<<<<<<< ":
			open = true
		case open && len(l) >= 8 && string(l[:8]) == ">>>>>>> ":
			return true, true
		}
	}
	return sc.Err() == nil, false
}

// Count is how many commits are in to but not in from.
func (w *Worktree) Count(ctx context.Context, from, to string) (int, error) {
	out, err := w.repo().line(ctx, "rev-list", "--count", to, "^"+from, "--")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(out)
}

// Dirty lists what is uncommitted in the worktree, brought-along paths
// aside (git status --porcelain paths), and every submodule checked out
// there ("path/"): zwarm never looks inside one (judgeSubmodulesByCommit),
// so what it holds uncommitted is not known, and is not taken for none.
func (w *Worktree) Dirty(ctx context.Context) ([]string, error) {
	spec, err := w.pathspec(ctx)
	if err != nil {
		return nil, err
	}
	out, err := w.tree().run(ctx, append([]string{"status", "--porcelain=v1", "-z", "--untracked-files=normal", "--no-renames"}, spec...)...)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rec := range splitZ(out) {
		if len(rec) > 3 {
			paths = append(paths, rec[3:])
		}
	}
	subs, err := w.checkedOutSubmodules(ctx)
	for _, p := range subs {
		if !slices.Contains(paths, p) && !slices.Contains(paths, strings.TrimSuffix(p, "/")) {
			paths = append(paths, p)
		}
	}
	return paths, err
}

// checkedOutSubmodules are the submodules of the worktree's index whose
// directory holds a repository, each "path/": the index alone is read.
func (w *Worktree) checkedOutSubmodules(ctx context.Context) ([]string, error) {
	out, err := w.tree().run(ctx, "ls-files", "--stage", "-z")
	if err != nil {
		return nil, err
	}
	var subs []string
	for _, rec := range splitZ(out) {
		meta, path, ok := strings.Cut(rec, "\t")
		if !ok || !strings.HasPrefix(meta, "160000 ") {
			continue
		}
		if _, err := os.Lstat(filepath.Join(w.Path, filepath.FromSlash(path), ".git")); err == nil {
			subs = append(subs, path+"/")
		}
	}
	return subs, nil
}

// Tip is the commit the worker's branch points at now, read without
// following a symbolic ref, and brought into your repository: "" when the
// branch is gone, is a symbolic ref (the worker's doing, which pin undoes
// before zwarm writes), or names a commit zwarm cannot take.
func (w *Worktree) Tip(ctx context.Context) string { return w.TipNear(ctx, "") }

// TipNear is Tip where the tip is likely at commit (where the last turn
// left it): whether your repository has that commit followed already is
// asked at the same time as the worker's repository is asked for the
// tip, so that a diff or a show of a settled worker waits for one git
// where it waited for two in turn. likely may be "" (Tip).
func (w *Worktree) TipNear(ctx context.Context, likely string) string {
	tip, err := w.tip(ctx, likely)
	if err != nil {
		return ""
	}
	return tip
}

// tip is TipNear with the error of taking the commit into your
// repository; likely may be "".
func (w *Worktree) tip(ctx context.Context, likely string) (string, error) {
	asked := w.OwnDir != "" && likely != ""
	followed := func() (bool, error) { return false, nil }
	if asked {
		followed = beside(func() (bool, error) { return w.followed(ctx, likely), nil })
	}
	commit, err := w.ownTip(ctx)
	already, _ := followed()
	if errors.Is(err, errNoBranch) {
		return "", err
	}
	if err != nil || commit == "" {
		return "", nil
	}
	// What the worker's repository says is taken into yours first (and
	// zwarm/<id> there follows it): the commit is then yours to diff, land
	// and keep.
	switch {
	case w.OwnDir == "":
	case asked && commit == likely:
		if !already {
			err = w.followMade(ctx, commit, "")
		}
	default:
		err = w.follow(ctx, commit)
	}
	if err != nil {
		return "", err
	}
	return commit, nil
}

// ownTip is the tip of the worker's branch in its repository, "" when
// the branch is a symbolic ref (a worker's trick) or reads as two.
func (w *Worktree) ownTip(ctx context.Context) (string, error) {
	out, err := w.ownRepo().line(ctx, "for-each-ref", "--format=%(objectname) %(symref)", "refs/heads/"+w.Branch)
	if err != nil {
		return "", err
	}
	if out == "" {
		return "", fmt.Errorf("%w %s", errNoBranch, w.Branch)
	}
	commit, symref, _ := strings.Cut(out, " ")
	if symref != "" || strings.Contains(commit, "\n") {
		return "", nil
	}
	return commit, nil
}

var errNoBranch = errors.New("the worker's repository has no branch")

// SetupMade lists what the worktree holds that it did not when it was
// made, as git status sees it beside the worker's branch: the untracked
// files and directories (not ignored ones; what was brought along aside),
// and the tracked files changed. Called right after the setup command,
// it is what setup made, which is not the worker's: the untracked part
// goes into Exclude, so it is never committed as the worker's change.
func (w *Worktree) SetupMade(ctx context.Context) (untracked, changed []string, err error) {
	spec, err := w.pathspec(ctx)
	if err != nil {
		return nil, nil, err
	}
	out, err := w.tree().run(ctx, append([]string{"status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignored=no", "--no-renames"}, spec...)...)
	if err != nil {
		return nil, nil, err
	}
	// git lists a new directory whole ("config/"), a brought file in it
	// or not: one that holds a brought file is listed again file by file,
	// or the worker's files made there later would count as setup's.
	var mixed []string
	for _, rec := range splitZ(out) {
		if len(rec) < 4 {
			continue
		}
		p := strings.TrimSuffix(rec[3:], "/")
		switch {
		case !strings.HasPrefix(rec, "?? "):
			changed = append(changed, p)
		case strings.HasSuffix(rec, "/") && slices.ContainsFunc(w.Exclude, func(e string) bool { return strings.HasPrefix(e, p+"/") }):
			mixed = append(mixed, p+"/")
		default:
			untracked = append(untracked, p)
		}
	}
	if len(mixed) == 0 {
		return untracked, changed, nil
	}
	paths, err := w.untrackedIn(ctx, w.tree(), mixed)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range paths {
		if !w.leftOut(p) {
			untracked = append(untracked, strings.TrimSuffix(p, "/"))
		}
	}
	return untracked, changed, nil
}

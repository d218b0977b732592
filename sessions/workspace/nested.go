package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// NestedRepoError says the worktree holds a git repository of its own
// (a worker ran git init, or cloned, inside it). git would stage it as a
// link to a commit that exists only in that repository: landed, the link
// points nowhere and the files are gone. zwarm stages nothing then.
type NestedRepoError struct {
	Dirs   []string // relative to the worktree's top, with a trailing /
	Branch string   // the worker's branch, zwarm/<session id>
}

func (e *NestedRepoError) Error() string {
	return fmt.Sprintf("%s %s a git repository of its own inside the worktree, which zwarm does not commit (it would land as a link to commits that exist nowhere else): "+
		"remove its .git to have its files committed as the worker's (zwarm inject %s \"remove %s.git\"), or move it out of the worktree",
		strings.Join(e.Dirs, ", "), map[bool]string{true: "is", false: "are each"}[len(e.Dirs) == 1], shortID(e.Branch), e.Dirs[0])
}

// statusChanges is what git status lists in a worktree, for staging it.
type statusChanges struct {
	// tracked are the paths git tracks that changed, are gone, or are in
	// conflict; deleted those that became directories; untracked the new
	// ones (an untracked directory whole, "dir/"); ignored the
	// directories ignored whole ("dir/"), when asked for.
	tracked, deleted, untracked, ignored []string
	// unmerged says a path is in conflict.
	unmerged bool
}

// changed lists what git status sees changed in the worktree, with g's
// index. The untracked directories that are repositories of their own
// come back as a *NestedRepoError: git status shows each as one untracked
// entry, "dir/", and stops there. With ignored, the directories git
// ignores whole are listed too (in the same walk).
func (w *Worktree) changed(ctx context.Context, g git, spec []string, ignored bool) (statusChanges, *NestedRepoError, error) {
	var ch statusChanges
	g.stdout, g.stdin = nil, nil
	mode := "--ignored=no"
	if ignored {
		mode = "--ignored=matching"
	}
	// --no-optional-locks: status would write the index it refreshed,
	// which staging writes again at once (in a repository of 20,000
	// files, a tenth of a commit).
	out, err := g.run(ctx, append([]string{"--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=normal", mode, "--no-renames"}, spec...)...)
	if err != nil {
		return ch, nil, err
	}
	var dirs, madeDirs []string
	for _, rec := range splitZ(out) {
		if len(rec) < 4 {
			continue
		}
		xy, p := rec[:2], rec[3:]
		switch {
		case xy == "!!":
			if strings.HasSuffix(p, "/") {
				ch.ignored = append(ch.ignored, p)
			}
		case xy == "??":
			if strings.HasSuffix(p, "/") && w.holdsGit(p) {
				dirs = append(dirs, p)
			}
			ch.untracked = append(ch.untracked, p)
		case xy == "D ":
			// A deletion already staged: nothing more to do.
		case realDir(filepath.Join(w.Path, filepath.FromSlash(p))):
			// A file git tracks that became a directory: the file goes
			// (update-index --remove refuses a directory), and the
			// directory is new (git status shows it only once the file
			// is out of the index), unless it is ignored (below).
			ch.deleted = append(ch.deleted, p)
			madeDirs = append(madeDirs, p)
		case onTheWay(w.Path, p):
			// A tracked directory became a symlink: git reads nothing
			// beyond it (update-index refuses the path), so the file is
			// gone, and the symlink is new.
			ch.deleted = append(ch.deleted, p)
		default:
			// Changed, added, deleted from the worktree (--remove drops
			// it), or in conflict (staged as the file is now).
			ch.tracked = append(ch.tracked, p)
			ch.unmerged = ch.unmerged || strings.Contains(xy, "U") || xy == "AA" || xy == "DD"
		}
	}
	// A directory where a tracked file was is new, and staged whole
	// unless an ignore rule keeps it out, as it keeps out the ignored
	// directory above a file someone added with git add -f: git add of
	// an ignored path named literally fails.
	keptOut, err := ignoredOf(ctx, g, madeDirs, "--no-index")
	if err != nil {
		return ch, nil, err
	}
	for _, p := range madeDirs {
		if keptOut[p] {
			continue
		}
		ch.untracked = append(ch.untracked, p+"/")
		if w.holdsGit(p) {
			dirs = append(dirs, p+"/")
		}
	}
	if len(dirs) == 0 {
		var err error
		if ch.untracked, dirs, err = w.untrackedWithin(ctx, g, ch.untracked); err != nil {
			return ch, nil, err
		}
	}
	if len(dirs) > 0 {
		return ch, &NestedRepoError{Dirs: dirs, Branch: w.Branch}, nil
	}
	return ch, nil, nil
}

// untrackedWithin is what git status listed untracked (an untracked
// directory whole, "dir/"), ready to be named to git literally, and the
// repositories of the worker's own deeper inside those directories
// ("app/" holding "app/lib/.git": git add of the directory would stage
// each as a link to a commit that exists only there). What the pathspec
// leaves out (leftOut) is left out here, by zwarm: a directory that holds
// some of it is listed file by file, without it; any other stays whole.
// Never an exclusion beside literal paths: git (2.39 at least) reads an
// exclusion from the offset of the other paths' common directory, so
// that with a new file in pkg/util/ only, the state dir's exclusion
// matched it, and with a longer directory, whatever memory held past the
// exclusion's end.
func (w *Worktree) untrackedWithin(ctx context.Context, g git, untracked []string) (list, nested []string, err error) {
	var whole []string
	for _, p := range untracked {
		switch {
		case w.leftOut(p):
		case strings.HasSuffix(p, "/"):
			whole = append(whole, p)
		default:
			list = append(list, p)
		}
	}
	if len(whole) == 0 {
		return list, nil, nil
	}
	paths, err := w.untrackedIn(ctx, g, whole)
	if err != nil {
		return nil, nil, err
	}
	listed := make(map[string]bool, len(whole))
	for _, d := range whole {
		listed[d] = true
	}
	mixed := map[string]bool{}
	for _, p := range paths {
		switch {
		case w.leftOut(p):
			mixed[dirOf(listed, p)] = true
		case strings.HasSuffix(p, "/") && w.holdsGit(p):
			nested = append(nested, p)
		}
	}
	for _, d := range whole {
		if !mixed[d] {
			list = append(list, d)
		}
	}
	for _, p := range paths {
		if mixed[dirOf(listed, p)] && !w.leftOut(p) {
			list = append(list, p)
		}
	}
	return list, nested, nil
}

// dirOf is the directory of dirs ("dir/", none inside another) that path
// is in, "" if none.
func dirOf(dirs map[string]bool, path string) string {
	for i := range len(path) {
		if path[i] == '/' && dirs[path[:i+1]] {
			return path[:i+1]
		}
	}
	return ""
}

// untrackedIn lists, file by file, what is untracked in the directories
// dirs ("dir/", as git status lists a new directory whole), what the
// pathspec leaves out included, a repository among them as "dir/", its
// files unread: the walk git add makes of them anyway.
func (w *Worktree) untrackedIn(ctx context.Context, g git, dirs []string) ([]string, error) {
	args := []string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=no", "--no-renames", "--"}
	for _, d := range dirs {
		// A literal "dir/" matches nothing: "dir" matches it and below.
		args = append(args, ":(top,literal)"+strings.TrimSuffix(d, "/"))
	}
	g.stdout, g.stdin = nil, nil
	out, err := g.run(ctx, args...)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rec := range splitZ(out) {
		if p, ok := strings.CutPrefix(rec, "?? "); ok {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// shortID is the session id of a worker's branch as zwarm prints it.
func shortID(branch string) string {
	id := strings.TrimPrefix(branch, "zwarm/")
	return id[:min(8, len(id))]
}

// MissingGitlinks lists the paths the change from..to links to a commit
// the repository does not have (a submodule entry a worker made of a
// repository of its own): landed, each would point nowhere.
func MissingGitlinks(ctx context.Context, commonDir, from, to string) ([]string, error) {
	out, err := git{dir: commonDir}.run(ctx, "diff", "--raw", "--no-renames", "--no-abbrev", "-z", from, to, "--")
	if err != nil {
		return nil, err
	}
	var missing []string
	fields := splitZ(out)
	for i := 0; i+1 < len(fields); i += 2 {
		// ":100644 160000 <old> <new> M", then the path.
		meta := strings.Fields(fields[i])
		if len(meta) < 5 || meta[1] != "160000" {
			continue
		}
		if !CommitExists(ctx, commonDir, meta[3]) {
			missing = append(missing, fields[i+1])
		}
	}
	return missing, nil
}

// holdsGit reports whether the directory rel of the worktree holds a
// .git of its own (a repository of the worker's making).
// NestedAmong are those of paths (git status's, relative to the top)
// that are directories holding a repository of their own, each "dir/": a
// .git directory (git init, a clone), not the .git file of a submodule
// checked out from your repository.
func (w *Worktree) NestedAmong(paths []string) []string {
	var nested []string
	for _, p := range paths {
		p = strings.TrimSuffix(p, "/")
		if fi, err := os.Lstat(filepath.Join(w.Path, filepath.FromSlash(p), ".git")); err == nil && fi.IsDir() {
			nested = append(nested, p+"/")
		}
	}
	return nested
}

func (w *Worktree) holdsGit(rel string) bool {
	_, err := os.Lstat(filepath.Join(w.Path, filepath.FromSlash(rel), ".git"))
	return err == nil
}

// onTheWay reports whether a directory on the way to rel, below top, is
// a symlink.
func onTheWay(top, rel string) bool {
	link, _ := symlinkOnTheWay(top, filepath.FromSlash(rel))
	return link != ""
}

// realDir reports whether p is a directory itself, not a symlink to one.
func realDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

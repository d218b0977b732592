package workspace

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/store"
)

// remember keeps the answer ch of a git status that started at began,
// with spec, and a stamp of all it depends on (scan.go). A stamp too
// close to began is kept unsure: the scan does not hold, but the next
// walk reads again only what changed since this one.
func (w *Worktree) remember(ctx context.Context, g git, began time.Time, spec []string, ch statusChanges) {
	prior := w.load()
	forget(w.Path)
	if !w.remembers() {
		return
	}
	s := &scan{key: w.scanKey(), spec: spec, untracked: ch.untracked}
	k := walker{top: w.Path, began: began, skip: map[string]bool{}}
	for _, d := range ch.ignored {
		k.skip[strings.TrimSuffix(d, "/")] = true
	}
	for _, e := range w.Exclude {
		k.skip[filepath.Clean(e)] = true
	}
	if prior != nil {
		k.knowFrom(prior)
	}
	top, err := stampDir(w.Path)
	if err != nil {
		return
	}
	k.root = top.dev
	if !k.dir(".") {
		return
	}
	s.dirs, s.pruned = k.dirs, k.pruned
	files, err := w.scanInputs(ctx, g)
	if err != nil {
		return
	}
	for _, f := range append(files, k.ignoreFiles...) {
		st, err := stampOf(f)
		if err != nil {
			return
		}
		if st.racy(began) {
			st = unsure
		}
		s.files = append(s.files, stamped{f, st})
	}
	// files[0] is the index; one that has not changed since a scan that
	// was kept needs no second look.
	if prior == nil || s.files[0].stamp == unsure || prior.files[0] != s.files[0] {
		if plain, err := w.plainIndex(ctx, g); err != nil || !plain {
			return
		}
	}
	// A scan that cannot be kept costs the next diff a walk, nothing else.
	store.WriteFileAtomic("", scanFile(w.Path), []byte(s.encode()))
}

// plainIndex reports whether g's index tracks no submodule and nothing
// the exclusions leave out (a .zwarm, what was brought along): a diff of
// the files shows those as they are in the worktree, or as submodule
// config says, where staging leaves them as the index has them. Such a
// worktree is always walked.
func (w *Worktree) plainIndex(ctx context.Context, g git) (bool, error) {
	g.stdout, g.stdin = nil, nil
	out, err := g.run(ctx, "ls-files", "--stage", "-z")
	if err != nil {
		return false, err
	}
	for rec := range strings.SplitSeq(strings.TrimSuffix(out, "\x00"), "\x00") {
		meta, path, _ := strings.Cut(rec, "\t")
		if strings.HasPrefix(meta, "160000 ") || path == StateDirName || strings.HasPrefix(path, StateDirName+"/") || strings.Contains(path, "/"+StateDirName+"/") || strings.HasSuffix(path, "/"+StateDirName) {
			return false, nil
		}
		for _, e := range w.Exclude {
			if e = filepath.ToSlash(filepath.Clean(e)); path == e || strings.HasPrefix(path, e+"/") {
				return false, nil
			}
		}
	}
	return true, nil
}

// scanInputs are the files other than .gitignore files that git reads
// ignore rules or config from for the worktree, the index first (what is
// tracked is not untracked): the repository's info/exclude, every config
// file git reads (as git config lists them) and those it would read were
// they there, and the excludes file config names. The git program too:
// another version may answer otherwise.
func (w *Worktree) scanInputs(ctx context.Context, g git) ([]string, error) {
	// The worktree's git dir itself: a file made in it (HEAD written
	// again, which an includeIf onbranch reads; a shared index) changes
	// it.
	files := []string{filepath.Join(w.admin(), "index"), w.admin(), filepath.Join(w.own(), "info", "exclude"),
		filepath.Join(w.own(), "config"), filepath.Join(w.admin(), "config.worktree"), "/etc/gitconfig"}
	if shared, err := filepath.Glob(filepath.Join(w.admin(), "sharedindex.*")); err == nil {
		files = append(files, shared...)
	}
	if p, err := gitPath(); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil {
			files = append(files, p)
		}
	}
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"), filepath.Join(xdg, "git", "ignore"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	for _, k := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		if v := os.Getenv(k); v != "" {
			files = append(files, v)
		}
	}
	g.stdout, g.stdin = nil, nil
	out, err := g.run(ctx, "config", "-z", "--list", "--show-origin")
	if err != nil {
		return nil, err
	}
	// Records are "file:<path>", then "<key>\n<value>".
	recs := splitZ(out)
	for i := 0; i+1 < len(recs); i += 2 {
		origin, kv := recs[i], recs[i+1]
		from := ""
		if p, ok := strings.CutPrefix(origin, "file:"); ok {
			if !filepath.IsAbs(p) {
				p = filepath.Join(w.Path, p)
			}
			files = append(files, p)
			from = p
		} else if origin != "command line:" {
			// Config from somewhere no stamp covers.
			return nil, fmt.Errorf("config from %q", origin)
		}
		k, v, _ := strings.Cut(kv, "\n")
		k = strings.ToLower(k)
		include := k == "include.path" || strings.HasPrefix(k, "includeif.") && strings.HasSuffix(k, ".path")
		if k != "core.excludesfile" && !include || v == "" {
			continue
		}
		// An include is read relative to the file that names it, the
		// excludes file relative to the worktree; one that is not there
		// yet is stamped too.
		rel := w.Path
		if from != "" && include {
			rel = filepath.Dir(from)
		}
		if rest, ok := strings.CutPrefix(v, "~/"); ok && home != "" {
			v = filepath.Join(home, rest)
		} else if strings.HasPrefix(v, "~") {
			return nil, fmt.Errorf("%s is %q: another user's home is not followed", k, v)
		}
		if !filepath.IsAbs(v) {
			v = filepath.Join(rel, v)
		}
		files = append(files, v)
	}
	return files, nil
}

// walker stamps every directory below top that git status enters: not
// .git, not a .zwarm (excluded), not skip's (ignored whole, or brought
// along and excluded), which are pruned. It lists the .gitignore files it
// passes. A directory whose stamp is the one an earlier scan made holds
// the entries it held then, and is not read again.
type walker struct {
	top   string
	began time.Time
	skip  map[string]bool
	root  uint64 // top's device: the walk fails at a mount point

	// From the earlier scan.
	known     map[string]stamp
	children  map[string][]string
	gitignore map[string]bool

	dirs        []stamped
	pruned      []string
	ignoreFiles []string
}

// knowFrom takes what an earlier scan found.
func (k *walker) knowFrom(prior *scan) {
	k.known = map[string]stamp{}
	k.children = map[string][]string{}
	k.gitignore = map[string]bool{}
	for _, d := range prior.dirs {
		if d.stamp != unsure {
			k.known[d.path] = d.stamp
		}
		if d.path != "." {
			k.children[filepath.Dir(d.path)] = append(k.children[filepath.Dir(d.path)], d.path)
		}
	}
	for _, p := range prior.pruned {
		k.children[filepath.Dir(p)] = append(k.children[filepath.Dir(p)], p)
	}
	for _, f := range prior.files {
		if rel, err := filepath.Rel(k.top, filepath.Dir(f.path)); err == nil && filepath.Base(f.path) == ".gitignore" && filepath.IsLocal(rel) {
			k.gitignore[rel] = true
		}
	}
}

// dir stamps the directory rel and walks below it; false means no scan
// can be made (a mount point, or a directory that cannot be read).
func (k *walker) dir(rel string) bool {
	abs := filepath.Join(k.top, rel)
	if was, ok := k.known[rel]; ok {
		if now, err := stampDir(abs); err == nil && now == was && now.dev == k.root {
			k.dirs = append(k.dirs, stamped{rel, now})
			if k.gitignore[rel] {
				k.ignoreFiles = append(k.ignoreFiles, filepath.Join(abs, ".gitignore"))
			}
			for _, c := range k.children[rel] {
				if !k.enter(c) {
					return false
				}
			}
			return true
		}
	}
	f, err := os.Open(abs)
	if err != nil {
		return false
	}
	defer f.Close()
	var fst unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &fst); err != nil || fst.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false
	}
	st := stampOfStat(&fst)
	if st.dev != k.root {
		return false
	}
	if st.racy(k.began) {
		st = unsure
	}
	k.dirs = append(k.dirs, stamped{rel, st})
	ents, err := f.ReadDir(-1)
	if err != nil {
		return false
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case name == ".gitignore":
			k.ignoreFiles = append(k.ignoreFiles, filepath.Join(abs, name))
		case e.Type()&fs.ModeDir == 0, name == ".git", name == StateDirName:
		default:
			if !k.enter(filepath.Join(rel, name)) {
				return false
			}
		}
	}
	return true
}

// enter walks the directory rel, or prunes it.
func (k *walker) enter(rel string) bool {
	if k.skip[rel] {
		k.pruned = append(k.pruned, rel)
		return true
	}
	return k.dir(rel)
}

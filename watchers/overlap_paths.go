package watchers

import (
	"github.com/zwarm/zwarm/sessions/record"
	"path/filepath"
	"strings"
)

// place is where a worker's changed files are, for the overlap watcher.
// A file is keyed by where it is in its repository's main checkout, so
// two workers of one repository, each in its own worktree, meet on the
// same key, and a worker in place in that checkout meets them too.
type place struct {
	// gitDir is the repository's git dir; "" for a worker in place.
	gitDir string
	// base is what keys start with: the main checkout, or the working
	// directory of a worker in place.
	base string
	// roots are what the agent's absolute paths start with: the worktree's
	// top (or the working directory), as recorded and as resolved.
	roots []string
	// cwd is where the agent's relative paths start.
	cwd string
}

func (p place) inPlace() bool { return p.gitDir == "" }

// placeOf finds where s's changes go. Symbolic links in the recorded
// directories are resolved once here: an agent that builds its paths from
// its own working directory (getcwd) reports them resolved.
func placeOf(s *record.Session) place {
	if ws := s.Workspace; ws != nil {
		return place{gitDir: ws.GitDir, base: resolved(ws.Repo), roots: aliases(ws.Path), cwd: ws.Dir()}
	}
	return place{base: resolved(s.WorkingDir), roots: aliases(s.WorkingDir), cwd: s.WorkingDir}
}

// key is the key of a path an agent reported: inside the worktree it
// becomes the same file in the main checkout; outside it, it is ignored
// (it is not the worker's change of its repository). A worker in place
// has its paths compared as they are.
func (p place) key(path string) (string, bool) {
	if path == "" {
		return "", false
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.cwd, path)
	}
	if !filepath.IsAbs(path) {
		return "", false // no directory recorded to say where it is
	}
	path = filepath.Clean(path)
	for _, root := range p.roots {
		if rel, ok := within(root, path); ok {
			return filepath.Join(p.base, rel), true
		}
	}
	return path, p.inPlace()
}

// fileKey is the key of a repository-relative path a finished turn
// listed; a worker in place has no turn files.
func (p place) fileKey(rel string) (string, bool) {
	if p.inPlace() || rel == "" {
		return "", false
	}
	rel = filepath.Clean(filepath.FromSlash(rel))
	if filepath.IsAbs(rel) || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.Join(p.base, rel), true
}

// display is how a key is named in an alert: relative to the repository
// (or to the working directory of a worker in place) when it is inside.
func (p place) display(key string) string {
	if rel, ok := within(p.base, key); ok {
		return filepath.ToSlash(rel)
	}
	return key
}

// within returns path relative to dir, if path is strictly inside it.
func within(dir, path string) (string, bool) {
	if dir == "" || !strings.HasPrefix(path, dir) {
		return "", false
	}
	rest := path[len(dir):]
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		return rest, rest != ""
	}
	if len(rest) < 2 || rest[0] != filepath.Separator {
		return "", false
	}
	return rest[1:], true
}

// aliases are dir as recorded and, if different, resolved.
func aliases(dir string) []string {
	if dir == "" {
		return nil
	}
	dir = filepath.Clean(dir)
	if r := resolved(dir); r != dir {
		return []string{dir, r}
	}
	return []string{dir}
}

// resolved is dir with its symbolic links resolved, or as it is if that
// cannot be done (it is gone, or never was: a record from elsewhere).
func resolved(dir string) string {
	if dir == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zwarm/zwarm/sessions/workspace"
)

// Isolation is where a session's agent works.
const (
	// IsolationWorktree: a git worktree of its own, on a branch of its own
	// (the default inside a git repository).
	IsolationWorktree = "worktree"
	// IsolationNone: the directory it was started from, in place.
	IsolationNone = "none"
)

const worktreesKeys = "isolation/dir/copy/symlink/setup/verify_writable"

// WorktreesConfig is the [worktrees] table: how a session's worktree is
// made.
type WorktreesConfig struct {
	// Isolation is "worktree" (the default) or "none" (work in place).
	Isolation string `toml:"isolation"`
	// Dir is where worktrees go (default $XDG_DATA_HOME/zwarm/worktrees),
	// an absolute path or one starting with ~/.
	Dir string `toml:"dir"`
	// Copy and Symlink are paths (or patterns) relative to the
	// repository's top that are copied or linked into each worktree from
	// the checkout it was spawned from: what git does not carry (.env,
	// node_modules). A .worktreeinclude file at the top adds to Copy.
	Copy    []string `toml:"copy"`
	Symlink []string `toml:"symlink"`
	// Setup is a shell command run in the new worktree before the agent
	// starts (npm ci, say); if it fails, so does the session.
	Setup string `toml:"setup"`
	// VerifyWritable are more directories (or files) a landing's verify
	// command may write, besides its checkout, a temporary dir and its
	// build tools' caches, its own and empty (absolute paths, or starting with
	// ~/): it runs the worker's code, and may write nothing else of yours.
	// "/" lets it write anything.
	VerifyWritable []string `toml:"verify_writable"`
}

func (w WorktreesConfig) check() error {
	switch w.Isolation {
	case "", IsolationWorktree, IsolationNone:
	default:
		return fmt.Errorf("isolation = %q: want %q or %q", w.Isolation, IsolationWorktree, IsolationNone)
	}
	if w.Dir != "" && !filepath.IsAbs(w.Dir) && !strings.HasPrefix(w.Dir, "~/") {
		return fmt.Errorf("dir = %q: want an absolute path, or one starting with ~/", w.Dir)
	}
	for _, d := range w.VerifyWritable {
		if !filepath.IsAbs(d) && !strings.HasPrefix(d, "~/") {
			return fmt.Errorf("verify_writable = [..., %q, ...]: want absolute paths, or ones starting with ~/", d)
		}
	}
	return nil
}

// VerifyDirs are the VerifyWritable dirs, ~/ made the home dir.
func (w WorktreesConfig) VerifyDirs() []string {
	dirs := make([]string, 0, len(w.VerifyWritable))
	for _, d := range w.VerifyWritable {
		if rest, ok := strings.CutPrefix(d, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				continue
			}
			d = filepath.Join(home, rest)
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// Root is the directory worktrees go in.
func (w WorktreesConfig) Root() (string, error) {
	switch {
	case w.Dir == "":
		return workspace.DefaultRoot()
	case strings.HasPrefix(w.Dir, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("[worktrees] dir %s: %w", w.Dir, err)
		}
		return filepath.Join(home, w.Dir[2:]), nil
	}
	return w.Dir, nil
}

// ErrNoRepo explains an isolation that needs a repository and has none.
var ErrNoRepo = errors.New("not in a git repository")

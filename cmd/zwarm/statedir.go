package main

import (
	"os"
	"path/filepath"

	"github.com/zwarm/zwarm/sessions/workspace"
)

// StateDirEnv overrides the state dir.
const StateDirEnv = "ZWARM_STATE_DIR"

// stateDirName is the state dir's name in a project.
const stateDirName = ".zwarm"

// stateDirChoice is which state dir a command uses, and why.
type stateDirChoice struct {
	dir string
	// from says where it came from: "--state-dir", StateDirEnv, "found"
	// (the nearest .zwarm above the working directory) or "default" (none
	// found: ./.zwarm, made by the first command that writes).
	from string
}

// chooseStateDir finds the state dir as git finds .git: --state-dir, else
// ZWARM_STATE_DIR, else the nearest .zwarm/ in the working directory or
// one of its parents (from inside a linked worktree, the one of its
// repository's main checkout), else ./.zwarm. Nothing is created here: read-only
// commands leave a missing state dir missing.
func chooseStateDir(flag string) stateDirChoice {
	if flag != "" {
		return stateDirChoice{flag, "--state-dir"}
	}
	if env := os.Getenv(StateDirEnv); env != "" {
		return stateDirChoice{env, StateDirEnv}
	}
	wd, err := os.Getwd()
	if err != nil {
		return stateDirChoice{stateDirName, "default"}
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if isDir(filepath.Join(dir, stateDirName)) {
			return stateDirChoice{filepath.Join(dir, stateDirName), "found"}
		}
		// A worker's worktree names the state dir of its session (which
		// may be a subdirectory's, or another checkout's) beside it.
		if owner := workspace.TrustedOwner(dir); owner != "" && isDir(owner) {
			return stateDirChoice{owner, "found"}
		}
		// The top of another linked worktree: its repository's state dir
		// is beside the main checkout, found through git's files.
		if main := workspace.MainCheckout(dir); main != "" && isDir(filepath.Join(main, stateDirName)) {
			return stateDirChoice{filepath.Join(main, stateDirName), "found"}
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return stateDirChoice{filepath.Join(wd, stateDirName), "default"}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

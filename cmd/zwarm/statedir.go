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
	// Inside a worker's worktree, the file beside it names the state dir
	// of its session (which may be a subdirectory's, or another
	// checkout's). A .zwarm in the worktree is the worker's doing, never
	// taken: its config would name the programs your zwarm runs there.
	start, home := wd, wd
	if top := workerTop(wd); top != "" {
		owner := workspace.TrustedOwner(top)
		switch {
		case owner != "" && isDir(owner):
			return stateDirChoice{owner, "found"}
		case owner != "":
			return stateDirChoice{owner, "default"} // its session's, gone: made again there
		}
		start, home = filepath.Dir(top), filepath.Dir(top)
	}
	for dir := start; ; dir = filepath.Dir(dir) {
		if isDir(filepath.Join(dir, stateDirName)) {
			return stateDirChoice{filepath.Join(dir, stateDirName), "found"}
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
	return stateDirChoice{filepath.Join(home, stateDirName), "default"}
}

// workerTop is the top of the worker's worktree dir is in (a linked
// worktree with an owner file beside it, trusted or not), "" if none.
func workerTop(dir string) string {
	for ; ; dir = filepath.Dir(dir) {
		// The .git first: an lstat, where the owner file is a read, and
		// every command walks up here as it starts.
		if fi, err := os.Lstat(filepath.Join(dir, ".git")); err == nil && fi.Mode().IsRegular() && workspace.Owner(dir) != "" {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

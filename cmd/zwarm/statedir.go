package main

import (
	"os"
	"path/filepath"
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
// one of its parents, else ./.zwarm. Nothing is created here: read-only
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
		cand := filepath.Join(dir, stateDirName)
		if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
			return stateDirChoice{cand, "found"}
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return stateDirChoice{filepath.Join(wd, stateDirName), "default"}
}

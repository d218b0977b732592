package workspace

import (
	"io"
	"os"
	"path"
	"syscall"
)

// tipFileHolds reports whether the worker's branch is at commit as its
// ref file says: the one question a diff of a settled worker asks its
// repository, answered without starting a git (which costs a one-file
// diff as much as the diff itself).
//
// It says yes only where git would: in a repository that keeps its refs
// as files, as zwarm makes the worker's, a branch's loose ref file is the
// branch, whatever packed-refs holds. Anything else (a packed branch, a
// ref store of another format, a symbolic ref, a file that leads out of
// the repository, one that is not a file, another commit) is a no, and
// git is asked.
//
// The worker may write its branch while it runs, not after: a settled
// worker's ref file holding the tip zwarm recorded was written by git,
// zwarm's or that of a person who moved the branch back.
func (w *Worktree) tipFileHolds(commit string) bool {
	if commit == "" || w.Branch == "" {
		return false
	}
	root, err := os.OpenRoot(w.own())
	if err != nil {
		return false
	}
	defer root.Close()
	name := path.Join("refs", "heads", w.Branch)
	// A symlink there is, to git, a symbolic ref to the ref its text
	// names, not a path to follow.
	if fi, err := root.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	// Not blocking: a FIFO a worker left there would hold the open.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	var b [160]byte // a SHA-256 name and its newline, with room to see more
	n, _ := io.ReadFull(f, b[:])
	return string(b[:n]) == commit+"\n"
}

package state

import (
	"context"
	"os"
	"path/filepath"

	"github.com/zwarm/zwarm/sessions/store"
)

// The state dir's file primitives (symlink-safe opening, atomic writes,
// locks and how a command waits for them) are package store's; these are
// the names this package and its users know them by.

// SymlinkError is a symlink where zwarm's own file or directory should
// be (store.SymlinkError).
type SymlinkError = store.SymlinkError

// LockHolder is the process that holds a lock, as its note says.
type LockHolder = store.LockHolder

// LockWait is a lock a command has been waiting for a while:
// ManagerOptions.LockWaiting hears of it.
type LockWait = store.LockWait

// LockTimeoutError is a lock still held after the command waited
// lock_timeout for it. Nothing was changed.
type LockTimeoutError = store.LockTimeoutError

// ErrLockTimeout is returned (wrapped, as a *LockTimeoutError) when a lock
// is still held after lock_timeout.
var ErrLockTimeout = store.ErrLockTimeout

// DefaultLockTimeout is how long a command waits for a lock (config
// lock_timeout).
const DefaultLockTimeout = store.DefaultLockTimeout

const (
	dirPerm  = store.DirPerm
	filePerm = store.FilePerm
)

// OpenFile opens, and with os.O_CREATE makes, a file zwarm keeps in a
// state dir, never through a symlink (store.OpenFile).
func OpenFile(root, path string, flag int, perm os.FileMode) (*os.File, error) {
	return store.OpenFile(root, path, flag, perm)
}

// OpenAppend opens a log or transcript in a state dir for appending,
// making it if need be (store.OpenAppend).
func OpenAppend(root, path string) (*os.File, error) { return store.OpenAppend(root, path) }

// WriteFile writes a file zwarm keeps in a state dir, never through a
// symlink (store.WriteFile).
func WriteFile(root, path string, data []byte, flag int) error {
	return store.WriteFile(root, path, data, flag)
}

// CheckNoSymlinks refuses a symlink at path or any directory between root
// and it, naming it (store.CheckNoSymlinks).
func CheckNoSymlinks(root, path string) error { return store.CheckNoSymlinks(root, path) }

// WriteFileAtomic replaces a file of the store atomically: no directory
// between the state dir and it may be a symlink.
func (st *Store) WriteFileAtomic(path string, data []byte) error {
	return store.WriteFileAtomic(st.dir, path, data)
}

// OpenFile is OpenFile under the store's state dir.
func (st *Store) OpenFile(path string, flag int) (*os.File, error) {
	return store.OpenFile(st.dir, path, flag, filePerm)
}

func LockFile(root, path string) (*store.Lock, error) {
	return LockFileCtx(context.Background(), root, path)
}

// LockFileCtx takes the lock on path, in the state dir root, or gives up
// when ctx ends.
func LockFileCtx(ctx context.Context, root, path string) (*store.Lock, error) {
	return store.LockFile(ctx, root, path, filepath.Base(path))
}

package store

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A generation is a counter in a file of the state dir that writers
// advance, under an exclusive lock on it, before a change that a reader's
// cache cannot see by itself; a reader holds a shared lock on it while it
// trusts or rebuilds its cache. package sessions' listing cache is built
// on sessions.gen (its index.go says how).

// Generation reads the counter at path (under the state dir root) under a
// shared lock, which the caller releases when it has finished trusting or
// rebuilding its cache. ok is false when there is no usable generation (a
// read-only state dir, or a writer holding it: a reader never waits for
// one).
func Generation(root, path string) (gen uint64, unlock func(), ok bool) {
	f, err := OpenFile(root, path, os.O_RDWR|os.O_CREATE, FilePerm)
	if err != nil {
		return 0, func() {}, false
	}
	if err := Flock(f, unix.LOCK_SH|unix.LOCK_NB); err != nil {
		f.Close()
		return 0, func() {}, false
	}
	unlock = func() { f.Close() }
	var buf [32]byte
	n, _ := f.ReadAt(buf[:], 0)
	if s := strings.TrimSpace(string(buf[:n])); s != "" {
		if gen, err = strconv.ParseUint(s, 10, 64); err != nil {
			return 0, unlock, false
		}
	}
	return gen, unlock, true
}

// PeekGeneration reads the counter at path, as Generation does, but opens
// it for reading only and holds no lock after: a watcher of the file's
// close-write events (sessions' subscription) reads it without raising one
// itself. ok is false when it cannot say: no such file, or a writer holds
// it, in the middle of its change (its close tells when it is done).
func PeekGeneration(root, path string) (gen uint64, ok bool) {
	f, err := OpenFile(root, path, os.O_RDONLY, 0) // openat2 takes no mode without O_CREAT
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if err := Flock(f, unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return 0, false
	}
	var buf [32]byte
	n, _ := f.ReadAt(buf[:], 0)
	if s := strings.TrimSpace(string(buf[:n])); s != "" {
		if gen, err = strconv.ParseUint(s, 10, 64); err != nil {
			return 0, false
		}
	}
	return gen, true
}

// BumpGeneration runs change after advancing the counter at path, under
// its exclusive lock (what a waiter is told it waits for), so that no
// reader trusts its cache across the change.
func BumpGeneration(ctx context.Context, root, path, what string, change func() error) error {
	f, err := OpenFile(root, path, os.O_RDWR|os.O_CREATE, FilePerm)
	if err != nil {
		return change() // no cache can be trusted without it either
	}
	defer f.Close()
	if err := WaitLock(ctx, f, what); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	var buf [32]byte
	n, _ := f.ReadAt(buf[:], 0)
	gen, _ := strconv.ParseUint(strings.TrimSpace(string(buf[:n])), 10, 64)
	next := []byte(strconv.FormatUint(gen+1, 10) + "\n")
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.WriteAt(next, 0); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return change()
}

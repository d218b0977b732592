package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A generation is a counter in a file of the state dir that writers
// advance, under an exclusive lock on it, before a change that a reader's
// cache cannot see by itself; a reader holds a shared lock on it while it
// trusts or rebuilds its cache. package sessions' listing cache is built
// on sessions.gen (its index.go says how).
//
// Under the lease scheme (scheme.go) there is no shared lock, and a
// reader must not take one: a listing killed while it held it would hold
// up every writer for a lease. The counter stays in its file, replaced
// whole; writers take the lease lock <path>.lock; a reader takes nothing.
// It reads the counter, finds no writer's lock, and reads the counter
// again: the same twice, no writer was between the reads, so none had
// bumped it without having finished its change. A writer that comes
// after bumps it past what the reader read, and the cache the reader
// saves is not trusted.

// Generation reads the counter at path (under the state dir root) under a
// shared lock, which the caller releases when it has finished trusting or
// rebuilding its cache. ok is false when there is no usable generation (a
// read-only state dir, or a writer holding it: a reader never waits for
// one).
func Generation(root, path string) (gen uint64, unlock func(), ok bool) {
	if lease, err := UsesLeases(root, filepath.Dir(path)); err != nil || lease {
		if err != nil {
			return 0, func() {}, false
		}
		return leaseGeneration(root, path)
	}
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
	if lease, err := UsesLeases(root, filepath.Dir(path)); err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	} else if lease {
		return leaseBump(ctx, root, path, what, change)
	}
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

// leaseGeneration is Generation under the lease scheme: the counter, if
// no writer holds it while it is read.
func leaseGeneration(root, path string) (gen uint64, unlock func(), ok bool) {
	unlock = func() {}
	first, ok := readGeneration(root, path)
	if !ok {
		return 0, unlock, false
	}
	if _, err := os.Lstat(path + ".lock"); !errors.Is(err, fs.ErrNotExist) {
		return 0, unlock, false // a writer (or one that died: until its lease runs out)
	}
	if gen, ok = readGeneration(root, path); !ok || gen != first {
		return 0, unlock, false
	}
	return gen, unlock, true
}

// readGeneration reads the counter at path (never through a symlink);
// none is 0.
func readGeneration(root, path string) (uint64, bool) {
	f, err := OpenFile(root, path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, true
	}
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var buf [32]byte
	n, _ := f.ReadAt(buf[:], 0)
	s := strings.TrimSpace(string(buf[:n]))
	if s == "" {
		return 0, true
	}
	gen, err := strconv.ParseUint(s, 10, 64)
	return gen, err == nil
}

// leaseBump is BumpGeneration under the lease scheme: the counter is
// replaced whole (temporary file and rename), as a file with no lock of
// its own on it is.
func leaseBump(ctx context.Context, root, path, what string, change func() error) error {
	l, err := LeaseLock(ctx, root, path+".lock", what)
	if err != nil {
		return err
	}
	defer l.Unlock()
	if l.lease == nil {
		return change() // a read-only state dir: no cache can be trusted without it either
	}
	gen, _ := readGeneration(root, path)
	if err := WriteFileAtomic(root, path, []byte(strconv.FormatUint(gen+1, 10)+"\n")); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return change()
}

package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

const (
	dirPerm  = 0o700
	filePerm = 0o600
	// noFollow makes opening a planted symlink an error rather than a
	// write wherever it points.
	noFollow = unix.O_NOFOLLOW
)

// writeFileAtomic replaces path with data so that a reader sees either the
// old or the new content, never a mix, even if the writer is killed.
func writeFileAtomic(path string, data []byte) error {
	// The rename would replace a symlink, not write through it; but one
	// where zwarm's file should be was planted, and is reported.
	if err := refuseSymlink(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(filePerm); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}

// fileLock is an exclusive advisory lock on a file (flock). It is released
// by the kernel if the holder dies, so a killed process never leaves a
// session locked.
type fileLock struct {
	f     *os.File
	noted bool // the holder's note is in the file (lockwait.go)
}

func lockFile(path string) (*fileLock, error) {
	return lockFileCtx(context.Background(), path)
}

// lockFileCtx takes the lock, or gives up when ctx ends: a holder that
// never lets go (a stopped process) must not hang whoever needs the
// session, such as a kill. lockwait.go says how it waits.
func lockFileCtx(ctx context.Context, path string) (*fileLock, error) {
	return lockFileAs(ctx, path, filepath.Base(path))
}

func lockFileAs(ctx context.Context, path, what string) (*fileLock, error) {
	f, err := OpenFile("", path, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil && isReadOnly(err) {
		// A read-only state dir: the lock is still taken, so what is read
		// under it is whole; nothing will be written anyway.
		if rf, rerr := OpenFile("", path, os.O_RDONLY, 0); rerr == nil {
			f, err = rf, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	if err := waitLock(ctx, f, what); err != nil {
		f.Close()
		var te *LockTimeoutError
		if errors.As(err, &te) {
			return nil, err // it says what is locked, by whom, and what to do
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &fileLock{f: f, noted: noteHolder(f)}, nil
}

// flock takes an advisory lock on f, retrying when a signal interrupts.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}

func (l *fileLock) Unlock() {
	if l.noted {
		l.f.Truncate(0)
	}
	unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
}

package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

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
type fileLock struct{ f *os.File }

func lockFile(path string) (*fileLock, error) {
	return lockFileCtx(context.Background(), path)
}

// lockFileCtx takes the lock, or gives up when ctx ends: a holder that
// never lets go (a stopped process) must not hang whoever needs the
// session, such as a kill. An uncontended lock is taken at once; a
// contended one is tried again with a growing pause (flock has nothing to
// wait on but itself).
func lockFileCtx(ctx context.Context, path string) (*fileLock, error) {
	f, err := OpenFile("", path, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	if ctx.Done() == nil {
		err = flock(f, unix.LOCK_EX)
	} else {
		err = flockCtx(ctx, f)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &fileLock{f: f}, nil
}

func flockCtx(ctx context.Context, f *os.File) error {
	pause := time.Millisecond
	for {
		err := flock(f, unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
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
	unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
}

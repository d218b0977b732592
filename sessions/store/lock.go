package store

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Lock is an exclusive advisory lock on a file (flock). It is released
// by the kernel if the holder dies, so a killed process never leaves a
// session locked.
type Lock struct {
	f     *os.File
	noted bool // the holder's note is in the file (lockwait.go)
}

// LockFile takes the lock on path, what a waiter is told it waits for
// ("session 1a2b"), or gives up when ctx ends: a holder that never lets
// go (a stopped process) must not hang whoever needs the session, such
// as a kill. lockwait.go says how it waits.
func LockFile(ctx context.Context, path, what string) (*Lock, error) {
	f, err := OpenFile("", path, os.O_RDWR|os.O_CREATE, FilePerm)
	if err != nil && IsReadOnly(err) {
		// A read-only state dir: the lock is still taken, so what is read
		// under it is whole; nothing will be written anyway.
		if rf, rerr := OpenFile("", path, os.O_RDONLY, 0); rerr == nil {
			f, err = rf, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	if err := WaitLock(ctx, f, what); err != nil {
		f.Close()
		var te *LockTimeoutError
		if errors.As(err, &te) {
			return nil, err // it says what is locked, by whom, and what to do
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f: f, noted: noteHolder(f)}, nil
}

// Flock takes an advisory lock on f, retrying when a signal interrupts.
func Flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}

// Unlock releases the lock, emptying the holder's note first.
func (l *Lock) Unlock() {
	if l.noted {
		l.f.Truncate(0)
	}
	unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
}

// IsReadOnly reports an error of a state dir that cannot be written.
func IsReadOnly(err error) bool {
	return errors.Is(err, unix.EROFS) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM)
}

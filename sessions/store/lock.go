package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Lock is an exclusive lock on a file of a state dir, made the way the
// state dir's scheme says (scheme.go): an advisory flock(2), released by
// the kernel if the holder dies, so a killed process never leaves a
// session locked; or a lease file (lease.go), which holds on a shared file
// system and which a dead holder leaves until its lease runs out.
type Lock struct {
	f     *os.File
	noted bool       // the holder's note is in the file (lockwait.go)
	lease *leaseHeld // the lease scheme's lock, renewed while held
}

// LockFile takes the lock on path, in the state dir root ("" for a lock
// of no state dir: the scheme is then that of path's file system), what a
// waiter is told it waits for ("session 1a2b"), or gives up when ctx ends:
// a holder that never lets go (a stopped process) must not hang whoever
// needs the session, such as a kill. lockwait.go says how it waits.
func LockFile(ctx context.Context, root, path, what string) (*Lock, error) {
	lease, err := UsesLeases(root, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if lease {
		return LeaseLock(ctx, root, path, what)
	}
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
		return nil, lockError(path, err)
	}
	return &Lock{f: f, noted: noteHolder(f)}, nil
}

// LeaseLock takes the lock on path as a lease (lease.go), whatever the
// state dir's scheme, waiting as LockFile does. In a state dir that
// cannot be written it takes nothing: nothing will be written, and every
// record is replaced whole, so a reader needs no lock to see it whole.
func LeaseLock(ctx context.Context, root, path, what string) (*Lock, error) {
	t, err := newLeaseTaker(root, path, what)
	if err != nil && IsReadOnly(err) {
		return &Lock{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	defer t.close()
	if err := waitFor(ctx, what, leasePause, t.try, func() LockHolder { return t.holder }, nil); err != nil {
		return nil, lockError(path, err)
	}
	return &Lock{lease: t.held()}, nil
}

// ErrLocked is returned (wrapped, naming the holder) by TryLease when the
// lock is held.
var ErrLocked = errors.New("locked")

// TryLease takes the lock on path as a lease if it is free (or stale), at
// once, without waiting. Unlike LeaseLock, a state dir that cannot be
// written is an error.
func TryLease(root, path, what string) (*Lock, error) {
	t, err := newLeaseTaker(root, path, what)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	defer t.close()
	got, err := t.try()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !got {
		return nil, fmt.Errorf("%s is %w by %s", what, ErrLocked, t.holder)
	}
	return &Lock{lease: t.held()}, nil
}

func lockError(path string, err error) error {
	var te *LockTimeoutError
	if errors.As(err, &te) {
		return err // it says what is locked, by whom, and what to do
	}
	return fmt.Errorf("lock %s: %w", path, err)
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

// Unlock releases the lock: a flock's holder note is emptied first; a
// lease's file is removed if it is still ours.
func (l *Lock) Unlock() {
	if l.lease != nil {
		l.lease.release()
		return
	}
	if l.f == nil {
		return // nothing was taken (LeaseLock in a read-only state dir)
	}
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

package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zwarm/zwarm/sessions/store"
	"golang.org/x/sys/unix"
)

// lock serializes zwarm's changes to a repository's worktrees (worktree
// add, remove, prune, and the branches they make and delete): git does
// not, and two worktrees added at once to one repository can fail ("failed
// to read .git/worktrees/<id>/commondir"). The lock file is in the
// directory zwarm keeps the repository's worktrees in, which is zwarm's
// own; it is a flock, released when its process ends, however it ends,
// unless that directory is on a network file system (or ZWARM_LOCKS says
// so), where it is a lease lock (sessions/store), which a process killed
// while it holds it leaves until its lease runs out.
func (w *Worktree) lock(ctx context.Context) (func(), error) {
	dir := filepath.Dir(w.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make the worktrees directory: %w", err)
	}
	if lease, err := store.UsesLeases("", dir); err != nil {
		return nil, fmt.Errorf("lock the repository's worktrees: %w", err)
	} else if lease {
		// Waiting as long as ctx allows, as the flock below does: not
		// lock_timeout, which is for a session's locks.
		l, err := store.LeaseLock(store.WithLockPolicy(ctx, store.LockPolicy{}), "", filepath.Join(dir, ".lock"), "the repository's worktrees")
		if err != nil {
			return nil, fmt.Errorf("wait for another change to the repository's worktrees: %w", err)
		}
		return l.Unlock, nil
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the repository's worktrees: %w", err)
	}
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock the repository's worktrees: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for another change to the repository's worktrees: %w", ctx.Err())
		case <-time.After(pause):
		}
	}
}

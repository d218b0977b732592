package sessions

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"
)

// A settled session can be reopened by a follow-up while the supervisor that
// settled it is still tearing down: it kills and removes the session's
// cgroup on its way out, and would kill the agent a new supervisor has just
// started there. So each supervisor holds sessions/<id>/supervisor.lock for
// its whole life, and a new one makes its cgroup only once the lock is
// free: once the previous supervisor has exited, which the kernel makes
// true even of one that was SIGKILLed.

// handoverWait bounds the wait for a previous supervisor: it has settled
// the session and has only its teardown left, so a longer wait means it is
// stopped (SIGSTOP) or hung, and the new turn goes ahead without it.
const handoverWait = 30 * time.Second

func (st *Store) supervisorLockPath(id string) string {
	return filepath.Join(st.sessionDir(id), "supervisor.lock")
}

// holdSession takes the supervisor lock of session id, waiting for a
// previous supervisor to exit. It returns the release, to be called after
// the cgroup is gone; without the lock (a hung predecessor, a signal while
// waiting, an unwritable lock file) the release does nothing.
func holdSession(ctx context.Context, st *Store, id string, log *slog.Logger) (release func()) {
	ctx, cancel := context.WithTimeout(ctx, handoverWait)
	defer cancel()
	start := time.Now()
	l, err := lockFileCtx(ctx, st.supervisorLockPath(id))
	if err != nil {
		log.Warn("the previous supervisor of the session still holds it; going ahead without waiting longer", "waited", time.Since(start).Round(time.Millisecond), "err", err)
		return func() {}
	}
	if waited := time.Since(start); waited > 50*time.Millisecond {
		log.Info("waited for the previous supervisor to exit", "waited", waited.Round(time.Millisecond))
	}
	return l.Unlock
}

package supervisor

import (
	"context"
	"log/slog"
	"time"

	"github.com/zwarm/zwarm/sessions/state"
)

// Each supervisor holds its session's supervisor lock for its whole life
// (see state.Turns.LockSupervisor): a new one makes its cgroup only once
// the previous one, which removes the cgroup on its way out, has exited.

// handoverWait bounds the wait for a previous supervisor: it has settled
// the session and has only its teardown left, so a longer wait means it is
// stopped (SIGSTOP) or hung, and the new turn goes ahead without it.
const handoverWait = 30 * time.Second

// holdSession takes the supervisor lock of its session, waiting for a
// previous supervisor to exit. It returns the release, to be called after
// the cgroup is gone; without the lock (a hung predecessor, a signal while
// waiting, an unwritable lock file) the release does nothing.
func holdSession(ctx context.Context, turns *state.Turns, log *slog.Logger) (release func()) {
	ctx, cancel := context.WithTimeout(ctx, handoverWait)
	defer cancel()
	start := time.Now()
	unlock, err := turns.Files.LockSupervisor(ctx)
	if err != nil {
		log.Warn("the previous supervisor of the session still holds it; going ahead without waiting longer", "waited", time.Since(start).Round(time.Millisecond), "err", err)
		return func() {}
	}
	if waited := time.Since(start); waited > 50*time.Millisecond {
		log.Info("waited for the previous supervisor to exit", "waited", waited.Round(time.Millisecond))
	}
	return unlock
}

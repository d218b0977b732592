package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"
)

// EndedText is why a session's job (runner's job id) is over, for its
// record, from what the engine said of it (st, ok: it knows the job;
// err: it could not be asked): the engine's words when it ended the job
// itself ("cancelled by slurm", "time limit 00:30:00"), byEngine then,
// else that its supervisor ended without recording.
func EndedText(runner, id string, st JobState, ok bool, err error) (msg string, byEngine bool) {
	switch {
	case err != nil:
		return fmt.Sprintf("its %s job %s could not be asked about: %v", runner, id, err), false
	case !ok:
		return fmt.Sprintf("its %s job %s is gone without recording the outcome", runner, id), false
	case st.ByEngine:
		return fmt.Sprintf("%s (job %s)", st.Why, id), true
	}
	return fmt.Sprintf("its %s job %s ended (%s) without recording the outcome", runner, id, cmp.Or(st.Why, "its command exited")), false
}

// StateText says where a live session's job is, in its runner's words:
// "queued · slurm 1234 (Resources)", "slurm 1234 on node1", on another
// cluster, or that the engine does not answer, with what it last said
// (seen) at now.
func StateText(runner, id string, st JobState, ok bool, err error, seen Seen, now time.Time) string {
	var fe *ForeignError
	switch {
	case errors.Is(err, ErrUnreachable):
		return seen.Describe(runner, id, now)
	case errors.As(err, &fe):
		return fmt.Sprintf("%s job %s on cluster %s (this machine reaches %s: not judged from here)", runner, id, fe.Cluster, fe.Here)
	case err != nil:
		return fmt.Sprintf("%s: %v", runner, err)
	case !ok:
		return fmt.Sprintf("%s job %s gone", runner, id)
	case st.Phase == Queued:
		return "queued · " + st.Detail
	}
	return st.Detail
}

// WaitGone waits, at most ten seconds, until the engine no longer runs
// job (named by runner, for errors): after a kill, nothing of the
// session runs on any node. A job of that id that runs another session
// is not it.
func WaitGone(ctx context.Context, r Runner, job JobRef, runner string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		states, err := r.Jobs(ctx, []string{job.ID})
		if err == nil {
			if st, ok := states[job.ID]; !ok || st.Phase == Ended || !st.Runs(job) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("%s job %s: %w", runner, job.ID, err)
			}
			return fmt.Errorf("%s job %s still runs after it was ended", runner, job.ID)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// StopLimit bounds one request to stop a job.
const StopLimit = 10 * time.Second

// StopWithin asks the engine to stop a job (named by runner, for errors),
// the request bounded by StopLimit: a controller that is down, or a job
// it cannot signal (a suspended one), must not hang a kill.
func StopWithin(ctx context.Context, r Runner, job JobRef, runner string, force bool) error {
	ctx, cancel := context.WithTimeout(ctx, StopLimit)
	defer cancel()
	if err := r.Stop(ctx, job, force); err != nil {
		return fmt.Errorf("%s job %s: %w", runner, job.ID, err)
	}
	return nil
}

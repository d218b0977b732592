package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/runner"
	"github.com/zwarm/zwarm/sessions/state"
)

// killRemote stops a session whose supervisor runs under another runner.
// As on this host, the kill is first marked in the record, so no turn
// starts from then on; a job still queued is cancelled at once; a running
// one's supervisor is asked to stop (it stops its agent with the grace
// period and records the kill), and the job is ended by force if it has
// not within the grace period and ten seconds. Kill returns once the
// engine no longer runs the job.
func (m *Manager) killRemote(ctx context.Context, id, reason string, grace time.Duration, queued *map[string]bool) (*record.Session, error) {
	self, err := proc.RefOf(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("kill %s: %w", record.ShortID(id), err)
	}
	pre, err := m.st.Load(id)
	if err == nil && !pre.Settled() {
		// Another cluster's job is not this machine's to end: nothing
		// is marked.
		if r, err := m.runner(pre.Job.Runner); err == nil {
			if err := foreignJob(ctx, r, pre); err != nil {
				return nil, fmt.Errorf("kill %s: %w", record.ShortID(id), err)
			}
		}
	}
	var job record.Job
	var claimed bool
	mark := func(tx *state.Tx) error {
		s := tx.Session()
		if s.Settled() {
			return nil
		}
		if s.Status() == record.StatusAttached {
			return attachedError(s)
		}
		if err := tx.RequestStop(reason, time.Now().UTC()); err != nil {
			return err
		}
		s.Killer = self
		job, claimed = *s.Job, state.OwnerAnswersSignals(s)
		*queued = m.st.QueuedIDs(id)
		return nil
	}
	s, err := m.st.UpdateCtx(m.writing(ctx), id, mark)
	forced := ""
	if errors.Is(err, state.ErrLockTimeout) && pre != nil && pre.Job != nil && pre.Job.ID != "" {
		// The record stays locked while the job runs: its supervisor,
		// which holds the lock while it writes, cannot finish (a
		// suspended job's processes are stopped). The job is ended by
		// force, which frees the lock, and the kill recorded after.
		why := fmt.Sprintf("its record stayed locked past lock_timeout while its %s job %s ran; the job was ended by force", pre.Job.Runner, pre.Job.ID)
		m.warn(fmt.Errorf("session %s: its record stayed locked past lock_timeout; ending its %s job %s by force", record.ShortID(id), pre.Job.Runner, pre.Job.ID))
		if forced, err = m.endJob(ctx, id, *pre.Job, why); err == nil {
			s, err = m.st.UpdateCtx(m.writing(ctx), id, mark)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("kill %s: %w", record.ShortID(id), err)
	}
	if s.Settled() {
		if forced != "" {
			return s, nil // ended by this kill, and judged so by a reader first
		}
		return s, fmt.Errorf("kill %s: %w: it %s", record.ShortID(id), ErrNotRunning, s.Status().Ended())
	}
	recorded := false
	defer func() {
		if !recorded {
			m.releaseKill(ctx, id, self)
		}
	}()
	note := forced
	if forced == "" {
		if note, err = m.stopJob(ctx, id, job, claimed, grace); err != nil {
			return nil, fmt.Errorf("kill %s: %w", record.ShortID(id), err)
		}
	}
	// The job is over. Should it have run on this host, what a
	// supervisor ended by force left here (its cgroup, a process that
	// escaped the job) goes too; elsewhere there is nothing to find.
	if err := m.sweepOut(ctx, id); err != nil {
		m.warn(fmt.Errorf("session %s: %w", record.ShortID(id), err))
	}
	if s, err = m.recordKilled(ctx, id, self, note); err != nil {
		return nil, err
	}
	recorded = true
	return s, nil
}

// stopJob ends a session's job and waits until its engine no longer runs
// it. It returns a note for the record when zwarm had to end the job
// itself.
func (m *Manager) stopJob(ctx context.Context, id string, job record.Job, claimed bool, grace time.Duration) (string, error) {
	if job.ID == "" {
		// Not submitted yet: the command submitting it records the job,
		// and its supervisor, claiming the session, sees the kill.
		wctx, cancel := context.WithTimeout(ctx, handoverTimeout+grace+10*time.Second)
		defer cancel()
		s, err := m.waitUntil(wctx, id, func(s *record.Session) (bool, error) { return s.Settled() || s.Job.ID != "", nil })
		if err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "its job was not submitted in time", nil
		}
		if s.Settled() {
			return "", nil
		}
		job = *s.Job
	}
	r, err := m.runner(job.Runner)
	if err != nil {
		return "", err
	}
	defer m.jobs.Forget(job.Runner)
	ref := runner.JobRef{ID: job.ID, Session: id, Batch: job.Batch}
	if !claimed {
		// Queued, or started and not yet listening for signals: nothing
		// of the agent ran, and the job is ended at once.
		return m.endJob(ctx, id, job, fmt.Sprintf("its %s job %s was cancelled before it ran the agent", job.Runner, job.ID))
	}
	if err := runner.StopWithin(ctx, r, ref, job.Runner, false); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return m.endJob(ctx, id, job, fmt.Sprintf("its supervisor could not be signalled (%v); its %s job %s was ended by force", err, job.Runner, job.ID))
	}
	wctx, cancel := context.WithTimeout(ctx, grace+10*time.Second)
	_, werr := m.waitUntil(wctx, id, func(s *record.Session) (bool, error) { return s.Settled(), nil })
	cancel()
	if werr != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return m.endJob(ctx, id, job, fmt.Sprintf("its supervisor did not stop within %s; its %s job %s was ended by force", grace+10*time.Second, job.Runner, job.ID))
	}
	return "", runner.WaitGone(ctx, r, ref, job.Runner)
}

// endJob ends a session's job by force and waits until its engine no
// longer runs it; why is the note for the record.
func (m *Manager) endJob(ctx context.Context, id string, job record.Job, why string) (string, error) {
	r, err := m.runner(job.Runner)
	if err != nil {
		return "", err
	}
	ref := runner.JobRef{ID: job.ID, Session: id, Batch: job.Batch}
	if err := runner.StopWithin(ctx, r, ref, job.Runner, true); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("could not end it: %w; run zwarm kill again once %s answers", err, job.Runner)
	}
	return why, runner.WaitGone(ctx, r, ref, job.Runner)
}

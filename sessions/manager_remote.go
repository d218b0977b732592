package sessions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/runner"
	"github.com/zwarm/zwarm/sessions/state"
)

// submit hands a session's supervisor to the runner it runs under, and
// records the job. The command that submits it owns the session until the
// job id is recorded; from then on the runner's word on the job says
// whether the session has a live owner.
func (m *Manager) submit(ctx context.Context, s *record.Session) error {
	r, err := m.runner(s.Job.Runner)
	if err != nil {
		return err
	}
	argv := append(append([]string{}, m.supervisorArgv...), "--state-dir", m.st.Dir(), s.ID)
	// A submission is not interrupted: an engine may have queued the job
	// by the time its client is killed, and the job id, needed to follow
	// or cancel it, would be lost. It is bounded instead.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jobSubmitLimit)
	defer cancel()
	jobID, err := r.Start(sctx, runner.Spec{SessionID: s.ID, Argv: argv, Dir: s.WorkingDir, SessionDir: m.st.SessionDir(s.ID)})
	if err != nil {
		return err
	}
	m.jobs.Forget(s.Job.Runner)
	_, err = m.st.Update(s.ID, func(tx *state.Tx) error {
		s := tx.Session()
		if s.Job == nil {
			return fmt.Errorf("the record lost its job")
		}
		s.Job.ID = jobID
		if s.Owner != nil && s.Owner.Role == record.RoleSpawn && s.Owner.PID == os.Getpid() {
			// The job owns the session now, wherever it runs.
			s.Owner = nil
		}
		return nil
	})
	if err != nil {
		// The job runs, but nothing records it: stop it rather than leave
		// a supervisor nobody can find.
		r.Stop(context.WithoutCancel(ctx), jobID, true)
		return err
	}
	return nil
}

// jobSubmitLimit bounds the submission of a job.
const jobSubmitLimit = time.Minute

// ownerAlive says whether the session's owner still runs. On this host,
// that is its pid with its start time; under another runner, only the
// runner can tell, and known is false when it did not answer: nothing is
// concluded then, and the record is shown as it is.
func (m *Manager) ownerAlive(ctx context.Context, s *record.Session) (alive, known bool) {
	if !state.RunnerJudges(s) {
		return s.Owner.Alive(), true
	}
	if s.Job.ID == "" {
		// Its supervisor runs (it claimed the session) but its job is
		// not recorded yet: its pid is another host's, and nothing can
		// be concluded until the job is known.
		return true, false
	}
	st, ok, err := m.jobState(ctx, s)
	if err != nil {
		return true, false
	}
	return ok && st.Phase != runner.Ended, true
}

// jobEnded is why a session's job is over, for its record: the engine's
// words when it ended the job itself ("cancelled by slurm", "time limit
// 00:30:00"), else that its supervisor ended without recording.
func (m *Manager) jobEnded(ctx context.Context, s *record.Session) (msg string, byEngine bool) {
	st, ok, err := m.jobState(ctx, s)
	switch {
	case err != nil:
		return fmt.Sprintf("its %s job %s could not be asked about: %v", s.Job.Runner, s.Job.ID, err), false
	case !ok:
		return fmt.Sprintf("its %s job %s is gone without recording the outcome", s.Job.Runner, s.Job.ID), false
	case st.ByEngine:
		return fmt.Sprintf("%s (job %s)", st.Why, s.Job.ID), true
	}
	return fmt.Sprintf("its %s job %s ended (%s) without recording the outcome", s.Job.Runner, s.Job.ID, cmp.Or(st.Why, "its command exited")), false
}

// jobState is what the session's runner says of its job, asked at most
// once per poll interval for all the jobs asked about of late.
func (m *Manager) jobState(ctx context.Context, s *record.Session) (runner.JobState, bool, error) {
	r, err := m.runner(s.Job.Runner)
	if err != nil {
		return runner.JobState{}, false, err
	}
	return m.jobs.State(ctx, s.Job.Runner, r, s.Job.ID, time.Now())
}

// abandonRemote settles a session whose job ended without its supervisor
// recording the outcome. Callers hold the lock.
func (m *Manager) abandonRemote(ctx context.Context, tx *state.Tx) error {
	s := tx.Session()
	msg, byEngine := m.jobEnded(ctx, s)
	if r, err := m.runner(s.Job.Runner); err == nil {
		// Whatever is left of the job goes with it, and what it left
		// on this host, should it have run here.
		r.Stop(ctx, s.Job.ID, true)
	}
	if err := m.sweepOut(ctx, s.ID); err != nil {
		m.warn(fmt.Errorf("session %s: %w", record.ShortID(s.ID), err))
	}
	now := time.Now().UTC()
	if byEngine {
		if s.Stop == nil {
			s.Stop = &record.StopRequest{At: now, Reason: msg}
		}
		if err := tx.Stopped("", now); err != nil {
			return err
		}
		return m.st.DropQueued(s, fmt.Sprintf("the session was stopped (%s) before it was delivered", msg))
	}
	if err := tx.Abandon(msg, now); err != nil {
		return err
	}
	return m.st.DropQueued(s, "the supervisor's job ended before it was delivered")
}

// runnerState says where a live session's job is, in its runner's words:
// "queued · slurm 1234 (Resources)", "slurm 1234 on node1", or that the
// runner does not answer.
func (m *Manager) runnerState(ctx context.Context, s *record.Session) string {
	switch {
	case s.Settled():
		return ""
	case s.Job.ID == "":
		return "submitting to " + s.Job.Runner
	}
	st, ok, err := m.jobState(ctx, s)
	switch {
	case errors.Is(err, runner.ErrUnreachable):
		return m.lastSeen(s, time.Now())
	case err != nil:
		return fmt.Sprintf("%s: %v", s.Job.Runner, err)
	case !ok:
		return fmt.Sprintf("%s job %s gone", s.Job.Runner, s.Job.ID)
	case st.Phase == runner.Queued:
		return "queued · " + st.Detail
	}
	return st.Detail
}

// lastSeen says, for a session whose runner does not answer, for how long
// it has not, and what it last said of the session's job and when.
func (m *Manager) lastSeen(s *record.Session, now time.Time) string {
	seen := m.jobs.LastSeen(s.Job.Runner)
	msg := s.Job.Runner + " unreachable"
	if seen.UnreachableSince != nil {
		msg += " for " + now.Sub(*seen.UnreachableSince).Round(time.Second).String()
	}
	if j, ok := seen.Jobs[s.Job.ID]; ok {
		what := j.Detail
		if j.Phase == runner.Queued {
			what = "queued · " + what
		}
		msg += fmt.Sprintf("; %s as of %s ago", what, now.Sub(j.At).Round(time.Second))
	}
	return msg
}

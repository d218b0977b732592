package sessions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/zwarm/zwarm/sessions/config"
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
	limit := jobSubmitLimit
	if l, ok := r.(interface{ SubmitLimit() time.Duration }); ok && l.SubmitLimit() > 0 {
		limit = l.SubmitLimit()
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	cluster := r.Cluster(sctx)
	jobID, err := r.Start(sctx, runner.Spec{SessionID: s.ID, Argv: argv, Dir: s.WorkingDir,
		SessionDir: m.st.SessionDir(s.ID), SetupLog: m.st.SetupLog(s.ID), Resources: s.Job.Resources})
	if err != nil && (sctx.Err() != nil || errors.Is(err, runner.ErrUnreachable)) {
		// No answer is no refusal: the engine may have queued the job.
		jobID, err = m.findSubmitted(ctx, r, s, limit, err)
	}
	if err != nil {
		return err
	}
	m.jobs.Forget(s.Job.Runner)
	_, err = m.st.Update(s.ID, func(tx *state.Tx) error {
		s := tx.Session()
		if s.Job == nil {
			return fmt.Errorf("the record lost its job")
		}
		s.Job.ID, s.Job.Cluster = jobID, cluster
		if s.Owner != nil && s.Owner.Role == record.RoleSpawn && s.Owner.PID == os.Getpid() {
			// The job owns the session now, wherever it runs.
			s.Owner = nil
		}
		return nil
	})
	if err != nil {
		// The job runs, but nothing records it: stop it rather than leave
		// a supervisor nobody can find.
		r.Stop(context.WithoutCancel(ctx), runner.JobRef{ID: jobID, Session: s.ID}, true)
		return err
	}
	return nil
}

// jobSubmitLimit bounds the submission of a job, unless the runner says
// otherwise (SubmitLimit).
const jobSubmitLimit = time.Minute

// findLimit bounds looking for a job whose submission got no answer.
const findLimit = 30 * time.Second

// findSubmitted resolves a submission that got no answer (startErr): the
// job the engine queued for s all the same, its newest one that is not
// the job s already had (a follow-up's submission), or startErr when it
// has none.
func (m *Manager) findSubmitted(ctx context.Context, r runner.Runner, s *record.Session, limit time.Duration, startErr error) (string, error) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), findLimit)
	defer cancel()
	ids, err := r.Find(fctx, s.ID)
	if err != nil {
		return "", fmt.Errorf("%w; nor could zwarm ask whether it was queued all the same (%v): if it was, it will find no session to run", startErr, err)
	}
	if n := len(ids); n > 0 && ids[n-1] != s.Job.ID {
		m.warn(fmt.Errorf("session %s: %s did not answer within %s; it had queued job %s all the same, which zwarm follows",
			record.ShortID(s.ID), s.Job.Runner, limit, ids[n-1]))
		return ids[n-1], nil
	}
	return "", startErr
}

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
// once per poll interval for all the jobs asked about of late. A job of
// another cluster is not asked about (a *ForeignJobError); a job of that
// id that runs another session is not the session's, which is gone.
func (m *Manager) jobState(ctx context.Context, s *record.Session) (runner.JobState, bool, error) {
	r, err := m.runner(s.Job.Runner)
	if err != nil {
		return runner.JobState{}, false, err
	}
	if err := foreignJob(ctx, r, s); err != nil {
		return runner.JobState{}, false, err
	}
	st, ok, err := m.jobs.State(ctx, s.Job.Runner, r, s.Job.ID, time.Now())
	if ok && st.Session != s.ID {
		return runner.JobState{}, false, err
	}
	return st, ok, err
}

// ForeignJobError is a session whose job runs on another cluster than
// the one this machine's commands reach: its id means another job here,
// so nothing is concluded of it nor done to it from here.
type ForeignJobError struct {
	ID, Runner, JobID, Cluster, Here string
}

func (e *ForeignJobError) Error() string {
	return fmt.Sprintf("session %s runs as %s job %s on cluster %s, and this machine's %s commands reach cluster %s: "+
		"act on it from a machine of %s (or point SLURM_CONF at its config)", record.ShortID(e.ID), e.Runner, e.JobID, e.Cluster, e.Runner, e.Here, e.Cluster)
}

// Is makes a foreign job a request zwarm cannot carry out as asked here
// (exit code 2): nothing was done.
func (e *ForeignJobError) Is(target error) bool { return target == config.ErrInvalidRequest }

// foreignJob says whether s's job is another cluster's than the one r
// reaches; a job recorded without its cluster, or a cluster r cannot
// name, is taken as this one's.
func foreignJob(ctx context.Context, r runner.Runner, s *record.Session) error {
	if s.Job == nil || s.Job.Cluster == "" {
		return nil
	}
	here := r.Cluster(ctx)
	if here == "" || here == s.Job.Cluster {
		return nil
	}
	return &ForeignJobError{ID: s.ID, Runner: s.Job.Runner, JobID: s.Job.ID, Cluster: s.Job.Cluster, Here: here}
}

// abandonRemote settles a session whose job ended without its supervisor
// recording the outcome. Callers hold the lock.
func (m *Manager) abandonRemote(ctx context.Context, tx *state.Tx) error {
	s := tx.Session()
	msg, byEngine := m.jobEnded(ctx, s)
	if r, err := m.runner(s.Job.Runner); err == nil {
		// Whatever is left of the job goes with it, and what it left
		// on this host, should it have run here.
		r.Stop(ctx, runner.JobRef{ID: s.Job.ID, Session: s.ID}, true)
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
	case errors.As(err, new(*ForeignJobError)):
		fe := err.(*ForeignJobError)
		return fmt.Sprintf("%s job %s on cluster %s (this machine reaches %s: not judged from here)", s.Job.Runner, s.Job.ID, fe.Cluster, fe.Here)
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

package sessions

import (
	"context"
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
	argv := append(append([]string{}, m.supervisorArgv...), "--state-dir", m.st.Dir(), "--job", s.ID)
	got, err := runner.Submit(ctx, r, runner.Spec{SessionID: s.ID, Argv: argv, Dir: s.WorkingDir,
		SessionDir: m.st.SessionDir(s.ID), StateDir: m.st.Dir(), SetupLog: m.st.SetupLog(s.ID), Resources: s.Job.Resources}, s.Job.ID, m.warn)
	if err != nil {
		return err
	}
	m.jobs.Forget(s.Job.Runner)
	_, err = m.st.Update(s.ID, func(tx *state.Tx) error {
		s := tx.Session()
		if s.Job == nil {
			return fmt.Errorf("the record lost its job")
		}
		s.Job.ID, s.Job.Cluster, s.Job.Batch = got.ID, got.Cluster, got.Batch
		if s.Owner != nil && s.Owner.Role == record.RoleSpawn && s.Owner.PID == os.Getpid() {
			// The job owns the session now, wherever it runs.
			s.Owner = nil
		}
		return nil
	})
	if err != nil {
		// The job runs, but nothing records it: stop it rather than leave
		// a supervisor nobody can find.
		r.Stop(context.WithoutCancel(ctx), runner.JobRef{ID: got.ID, Session: s.ID, Batch: got.Batch}, true)
		return err
	}
	return nil
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

// jobEnded is why a session's job is over, for its record
// (runner.EndedText), and whether the engine ended it itself.
func (m *Manager) jobEnded(ctx context.Context, s *record.Session) (msg string, byEngine bool) {
	st, ok, err := m.jobState(ctx, s)
	return runner.EndedText(s.Job.Runner, s.Job.ID, st, ok, err)
}

// jobState is what the session's runner says of its job, asked at most
// once per poll interval for all the jobs asked about of late. A job of
// another cluster is not asked about (a *runner.ForeignError); a job of that
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
	if ok && !st.Runs(jobRef(s)) {
		return runner.JobState{}, false, err
	}
	return st, ok, err
}

// jobRef is s's job, for its runner.
func jobRef(s *record.Session) runner.JobRef {
	return runner.JobRef{ID: s.Job.ID, Session: s.ID, Batch: s.Job.Batch}
}

// foreignJob says whether s's job is another cluster's than the one r
// reaches (a *runner.ForeignError).
func foreignJob(ctx context.Context, r runner.Runner, s *record.Session) error {
	if s.Job == nil {
		return nil
	}
	return runner.CheckCluster(ctx, r, runner.Recorded{Session: record.ShortID(s.ID), Runner: s.Job.Runner, JobID: s.Job.ID, Cluster: s.Job.Cluster})
}

// abandonRemote settles a session whose job ended without its supervisor
// recording the outcome. Callers hold the lock.
func (m *Manager) abandonRemote(ctx context.Context, tx *state.Tx) error {
	s := tx.Session()
	msg, byEngine := m.jobEnded(ctx, s)
	if r, err := m.runner(s.Job.Runner); err == nil {
		// Whatever is left of the job goes with it, and what it left
		// on this host, should it have run here.
		r.Stop(ctx, jobRef(s), true)
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

// runnerState says where a live session's job is, in its runner's words
// (runner.StateText), and whether it waits in the engine's queue.
func (m *Manager) runnerState(ctx context.Context, s *record.Session) (string, bool) {
	switch {
	case s.Settled():
		return "", false
	case s.Job.ID == "":
		return "submitting to " + s.Job.Runner, false
	}
	st, ok, err := m.jobState(ctx, s)
	return runner.StateText(s.Job.Runner, s.Job.ID, st, ok, err, m.jobs.LastSeen(s.Job.Runner), time.Now()), ok && err == nil && st.Phase == runner.Queued
}

// Account fills in what the cluster's accounting says of s's ended jobs
// that its record lacks (one bounded call to the engine for all of them),
// and returns s as recorded then: the record keeps it after the engine's
// queue forgets the jobs, and its cost counts their core-hours. Without
// accounting (a runner or a cluster that keeps none), s is as it was.
func (m *Manager) Account(ctx context.Context, s *record.Session) *record.Session {
	ids := s.Unaccounted()
	if len(ids) == 0 {
		return s
	}
	r, err := m.runner(s.Job.Runner)
	acc, ok := r.(runner.Accountant)
	if err != nil || !ok {
		return s
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	got, err := acc.Accounting(actx, ids)
	if err != nil || len(got) == 0 {
		return s
	}
	var accounts []record.JobAccount
	for id, a := range got {
		accounts = append(accounts, record.JobAccount{ID: id, Node: a.Node, Elapsed: a.Elapsed, MaxRSS: a.MaxRSS, CPUs: a.CPUs, ExitCode: a.ExitCode, State: a.State})
	}
	prices := record.DefaultPrices()
	if cfg, err := m.Config(); err == nil {
		prices = cfg.PriceTable()
	}
	now, err := m.st.UpdateSettled(ctx, s.ID, func(tx *state.Tx) error { return state.Accounted(tx.Session(), accounts, prices) })
	if err != nil {
		m.warn(fmt.Errorf("session %s: record its jobs' accounting: %w", record.ShortID(s.ID), err))
		return s
	}
	return m.current(now, nil)
}

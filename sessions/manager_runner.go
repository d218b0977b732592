package sessions

import (
	"context"
	"time"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/runner"
	"github.com/zwarm/zwarm/sessions/state"
)

func (m *Manager) runner(name string) (runner.Runner, error) {
	cfg, err := m.Config()
	if err != nil {
		return nil, err
	}
	return m.runners.Make(name, cfg)
}

// CheckRunner says what is wrong with a runner's set-up for this state
// dir (nothing, for the local runner).
func (m *Manager) CheckRunner(ctx context.Context, name string) ([]string, error) {
	if name == "" || name == record.LocalRunner {
		return nil, nil
	}
	r, err := m.runner(name)
	if err != nil {
		return nil, err
	}
	return r.Check(ctx, m.st.Dir()), nil
}

// RunnerNames are the runners sessions may run under: local first.
func (m *Manager) RunnerNames() []string { return m.runners.Names() }

// CheckRunnerName refuses a runner that is not in the registry, as
// Spawn would (Invalidf): "" and "local" are always known.
func (m *Manager) CheckRunnerName(name string) error {
	_, err := m.runners.Choose(name, nil)
	return err
}

// jobOf gives s, a new session under runner (or this machine), the job
// it runs as, with what it asks of the engine over its role's, checked.
func (m *Manager) jobOf(s *record.Session, cfg *config.Config, runner string, req SpawnRequest) error {
	res, err := cfg.JobResources(req.Role, runner, req.Resources)
	if err != nil || runner == record.LocalRunner {
		return err
	}
	s.Job = &record.Job{Runner: runner, Resources: res}
	r, err := m.runner(runner)
	if err != nil {
		return err
	}
	if err := r.CheckResources(res); err != nil {
		return state.RoleSaid(req.Role, err)
	}
	return nil
}

// prefetch asks about the given sessions' jobs together, once per runner,
// before a listing looks at them one by one.
func (m *Manager) prefetchJobs(ctx context.Context, list []*record.Session) {
	byRunner := map[string][]string{}
	for _, s := range list {
		if state.RunnerJudges(s) && s.Job.ID != "" && !s.Settled() {
			byRunner[s.Job.Runner] = append(byRunner[s.Job.Runner], s.Job.ID)
		}
	}
	now := time.Now()
	for name, ids := range byRunner {
		r, err := m.runner(name)
		if err != nil {
			continue
		}
		m.jobs.Prefetch(ctx, name, r, ids, now)
	}
}

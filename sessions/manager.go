package sessions

import (
	"context"
	"slices"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/runner"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
	"github.com/zwarm/zwarm/sessions/watch"
)

// Manager is the API every front end uses: the CLI, the dashboard, the
// orchestrator's tools and `zwarm mcp`. It runs in their process; the
// supervisors it starts run in their own (package sessions/supervisor).
type Manager struct {
	st       *state.Store
	adapters agent.Adapters
	// supervisorArgv is the command that runs the supervisor: the zwarm binary
	// and its hidden subcommand. Detach and the session id are appended.
	supervisorArgv []string
	confineArgv    []string
	sections       []config.Section
	runners        runner.Registry
	jobs           runner.Cache
	warn           func(error)
	lockWaiting    func(state.LockWait)
	// cache is the listing cache: what listings and the subscriptions to
	// every session start from.
	cache *listing.Cache
}

// ManagerOptions configure a Manager.
type ManagerOptions struct {
	Store    *state.Store
	Adapters agent.Adapters
	// SupervisorArgv is the command line that reaches the supervisor
	// (supervisor.Supervise), e.g.
	// {"/usr/bin/zwarm", "__supervise"}.
	SupervisorArgv []string
	// ConfineArgv is the command line of zwarm __confine
	// (proc.RunConfined), through which a landing's verify runs
	// confined; with none, it runs with your rights, warned of.
	ConfineArgv []string
	// ConfigSections are the config.toml tables other packages own.
	ConfigSections []config.Section
	// Runners are the runners other than the local one, in the order
	// they are listed; their settings tables join ConfigSections.
	Runners []runner.Kind
	// Warn receives problems that do not stop an operation, such as a broken
	// config.toml while killing a session (the kill goes on with defaults).
	Warn func(error)
	// LockWaiting hears of a lock a command has waited for a second (the
	// CLI says so on stderr); nil says nothing.
	LockWaiting func(state.LockWait)
}

// NewManager returns a manager for a state directory.
func NewManager(opt ManagerOptions) *Manager {
	warn := opt.Warn
	if warn == nil {
		warn = func(error) {}
	}
	sections := slices.Clone(opt.ConfigSections)
	for _, sec := range runner.Sections(opt.Runners) {
		if !slices.ContainsFunc(sections, func(c config.Section) bool { return c.Name == sec.Name }) {
			sections = append(sections, sec)
		}
	}
	m := &Manager{st: opt.Store, adapters: opt.Adapters, supervisorArgv: opt.SupervisorArgv, confineArgv: opt.ConfineArgv,
		sections: sections, runners: opt.Runners, warn: warn, lockWaiting: opt.LockWaiting}
	m.cache = listing.NewCache(opt.Store, m.Judge)
	m.jobs.StateDir = opt.Store.Dir()
	return m
}

// Warn reports a problem that does not stop an operation, through the
// manager's Warn option.
func (m *Manager) Warn(err error) { m.warn(err) }

// Store returns the manager's state directory.
func (m *Manager) Store() *state.Store { return m.st }

// Adapters returns the adapters the manager can run.
func (m *Manager) Adapters() agent.Adapters { return m.adapters }

// Config reads config.toml with every section the manager knows.
func (m *Manager) Config() (*config.Config, error) {
	return config.Load(m.st.Dir(), m.sections...)
}

// Resolve turns an id prefix into a full id.
func (m *Manager) Resolve(idOrPrefix string) (string, error) {
	return listing.Resolve(m.st, idOrPrefix)
}

// Inbox lists a session's follow-ups and what became of each.
func (m *Manager) Inbox(id string) ([]record.InboxEntry, error) {
	id, err := listing.Resolve(m.st, id)
	if err != nil {
		return nil, err
	}
	return m.st.Inbox(id)
}

// containment finds the processes of a session from outside its
// supervisor: its cgroup and its marker.
func (m *Manager) containment(id string) proc.Scope {
	return proc.Scope{ID: id, Cgroup: m.st.SessionCgroup(id)}
}

// trusted refuses a state dir that another user could have written.
func (m *Manager) trusted() error { return config.CheckTrusted(m.st.Dir()) }

// writing is ctx for a command that changes sessions: its locks wait at
// most lock_timeout, and after a second it says what it waits for.
func (m *Manager) writing(ctx context.Context) context.Context {
	timeout := state.DefaultLockTimeout
	if cfg, err := m.Config(); err == nil {
		timeout = cfg.LockTimeout()
	}
	return store.WithLockPolicy(ctx, store.LockPolicy{Timeout: timeout, Notify: m.lockWaiting})
}

// Listings is the state dir's listing cache.
func (m *Manager) Listings() *listing.Cache { return m.cache }

// Subscribe follows sessions as they change (watch.go's Subscription).
func (m *Manager) Subscribe(ctx context.Context, opt watch.SubscribeOptions) (*watch.Subscription, error) {
	return watch.Subscribe(ctx, m, opt)
}

// Follow calls fn with each step of a session as it happens.
func (m *Manager) Follow(ctx context.Context, idOrPrefix string, opt watch.FollowOptions, fn func(watch.Step)) error {
	return watch.Follow(ctx, m, idOrPrefix, opt, fn)
}

// NewTrajectory reads a session's steps as they come.
func (m *Manager) NewTrajectory(id string, opt watch.TrajectoryOptions) *watch.Trajectory {
	return watch.NewTrajectory(m, id, opt)
}

// Transcript parses every turn of a session into memory (watch.Transcript).
func (m *Manager) Transcript(ctx context.Context, idOrPrefix string) (*record.Session, []watch.TurnLog, error) {
	return watch.Transcript(ctx, m, idOrPrefix)
}

// Turns lists a session's turns, those of a Python zwarm record included.
func (m *Manager) Turns(s *record.Session) []record.Turn { return watch.Turns(m, s) }

// ReadTurn parses turn n of s, passing each event to fn as it is read.
func (m *Manager) ReadTurn(ctx context.Context, s *record.Session, n int, fn func(record.Event)) error {
	return watch.ReadTurn(ctx, m, s, n, fn)
}

// RawTurn returns the path of turn n's raw output, checking it exists.
func (m *Manager) RawTurn(ctx context.Context, idOrPrefix string, n int) (string, error) {
	return watch.RawTurn(ctx, m, idOrPrefix, n)
}

// Orphans lists the cgroups of sessions gone from the state dir.
func (m *Manager) Orphans() ([]state.Orphan, error) { return m.st.Orphans() }

// KillOrphans kills and removes the orphaned cgroups, and lists them.
func (m *Manager) KillOrphans(ctx context.Context) ([]state.Orphan, error) {
	return m.st.KillOrphans(ctx)
}

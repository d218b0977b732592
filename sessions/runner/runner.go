package runner

import (
	"context"
	"errors"

	"github.com/zwarm/zwarm/sessions/config"
)

// Runner is where a session's supervisor runs when it is not this host: a
// cluster's scheduler, which runs `zwarm __supervise --state-dir D ID` as a
// job on one of its nodes. The supervisor there is the same code as on
// this host and writes the same files, to a state dir the nodes share;
// what a runner owns is what cannot be done from here with a pid: starting
// it, telling whether it still runs, and stopping it. Everything else
// (records, turns, follow-ups, listings) is the same for every runner.
//
// The local runner is not a Runner value: it is this package's own code
// (a detached process named by pid and start time, its cgroup, its exit
// watched through a pidfd). A second runner is one package implementing
// this interface and one entry in the registry the front end passes in
// ManagerOptions.Runners.
type Runner interface {
	// Start submits the supervisor's command line for a session and
	// returns the job's id in the engine. An engine refusing the job
	// (a bad partition, say) is an error carrying the engine's words;
	// nothing then runs.
	Start(ctx context.Context, spec Spec) (jobID string, err error)
	// Jobs reports the state of the given jobs with one call to the
	// engine, whatever their number. A job the engine no longer knows is
	// absent from the map. An engine that does not answer is an error
	// wrapping ErrRunnerUnreachable.
	Jobs(ctx context.Context, ids []string) (map[string]JobState, error)
	// Stop stops a job: gracefully (SIGTERM to the supervisor, which
	// stops its agent and records the kill itself), or by force (the job
	// and everything it started ends now; a queued job is cancelled).
	// Stopping a job that is gone is no error, and a job of that id that
	// is not job.Session's is left alone.
	Stop(ctx context.Context, job JobRef, force bool) error
	// CheckResources refuses resources the engine cannot be asked for
	// (an unknown key, a value of the wrong form), before anything is
	// submitted; the error (ErrInvalidRequest) says what to write.
	CheckResources(res map[string]string) error
	// Find lists the jobs the engine knows (queued, running or ended of
	// late) that run session's supervisor, oldest first: how a submission
	// whose answer never came (the engine slow, the client cut off) is
	// resolved, since the engine may have queued the job all the same.
	Find(ctx context.Context, session string) ([]string, error)
	// Cluster names the engine this machine's commands reach (Slurm's
	// ClusterName), "" when it cannot tell: a job is recorded with it,
	// and a job of another cluster is never judged or acted on from here,
	// where its id means another job.
	Cluster(ctx context.Context) string
	// Check says what is wrong with the runner's set-up for a state dir,
	// for doctor: one line each, empty when nothing is. A state dir its
	// nodes cannot see is one of those.
	Check(ctx context.Context, stateDir string) []string
}

// Spec is what a runner starts: the supervisor's command line for one
// session.
type Spec struct {
	SessionID string
	// Argv is the supervisor's command line, to be run as it is.
	Argv []string
	// Dir is the directory the job starts in (the session's working dir).
	Dir string
	// SessionDir is the session's directory in the state dir: an engine's
	// own output for the job goes there.
	SessionDir string
	// StateDir is the state dir; its SeenDir is the runners' own.
	StateDir string
	// Resources are what the job asks over the runner's settings, by
	// key (CheckResources has refused what it cannot ask).
	Resources map[string]string
	// SetupLog is the session's setup log, where what a job runs before
	// the supervisor (a runner's setup) writes its output, for zwarm logs.
	SetupLog string
}

// JobRef is a session's job: its id in the engine and the session it
// runs, which the engine's job of that id must be running to be acted on;
// for a job submitted in a batch, the batch, which it must bear instead.
type JobRef struct {
	ID, Session, Batch string
}

// Phase is where a job is in its engine.
type Phase int

const (
	// Queued: submitted, waiting for the engine to run it.
	Queued Phase = iota
	// Running: the supervisor runs.
	Running
	// Ended: the job is over, however it ended.
	Ended
)

// JobState is what the engine says of a job.
type JobState struct {
	Phase Phase
	// Detail is the engine's own words for where the job is, for the
	// session's step: "slurm 1234 (Resources)".
	Detail string
	// Why is, for an ended job, how the engine ended it, as a person
	// would say it: "cancelled by slurm", "time limit 00:30:00", "node
	// lost", "completed".
	Why string
	// ByEngine says the engine ended the job itself (cancelled, time
	// limit, node lost) rather than the job's command exiting.
	ByEngine bool
	// Session is the session the engine's job of this id runs, as its
	// name says; "" for a job that is not a zwarm worker. A job of
	// another session is not the one asked about: that one is gone.
	// Batch is, for a job submitted in a batch, that batch, whose name
	// its jobs bear instead (Runs).
	Session, Batch string
}

// Runs says whether the engine's job in st is job: it bears job's
// session's name, or its batch's.
func (st JobState) Runs(job JobRef) bool {
	if job.Batch != "" {
		return st.Batch == job.Batch
	}
	return st.Session != "" && st.Session == job.Session
}

// ErrUnreachable is a runner whose engine did not answer: records
// are shown as they are, and nothing is concluded about the job.
var ErrUnreachable = errors.New("runner unreachable")

// Kind is one entry of the registry of runners a front end passes
// to the Manager: a name, the [runner.NAME] table of config.toml its
// settings come from, and how to make the runner from them.
type Kind struct {
	Name string
	// Settings declares the [runner.NAME] table; its Name is ignored.
	Settings config.Section
	// New makes the runner from the decoded table (what Settings.New
	// returned, filled from the file).
	New func(settings any) (Runner, error)
}

// Sections are the config.toml tables of the runners: whatever
// reads config.toml (the supervisor too) declares them, so that a
// [runner.NAME] table is not an unknown key.
func Sections(kinds []Kind) []config.Section {
	out := make([]config.Section, 0, len(kinds))
	for _, k := range kinds {
		sec := k.Settings
		sec.Name = config.RunnerSection(k.Name)
		out = append(out, sec)
	}
	return out
}

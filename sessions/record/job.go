package record

// LocalRunner is the runner that starts a session's supervisor on this
// host, as a detached process: the default, and what a record without a
// job ran under.
const LocalRunner = "local"

// Job names where a session's supervisor runs when it is not this host.
type Job struct {
	// Runner is the runner's name ("slurm").
	Runner string `json:"runner"`
	// ID is the job's id in the engine, for the current or last start.
	ID string `json:"id"`
	// Cluster names the engine's cluster the job was submitted to ("":
	// not known, as for jobs recorded before clusters were): the id
	// means this job there only.
	Cluster string `json:"cluster,omitempty"`
}

// RunnerName is the runner the session's supervisor runs under.
func (s *Session) RunnerName() string {
	if s.Job != nil && s.Job.Runner != "" && s.Job.Runner != LocalRunner {
		return s.Job.Runner
	}
	return LocalRunner
}

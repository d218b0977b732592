package record

import (
	"slices"
	"time"
)

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
	// Batch names the batch the job was submitted in with other
	// sessions' (spawn -n: a Slurm job array), whose name the job bears
	// rather than the session's; "" for a job of its own.
	Batch string `json:"batch,omitempty"`
	// Resources are what every job of the session asks of its engine
	// over the runner's settings, by key (slurm: partition, time, cpus,
	// mem, gres, account, qos, constraint): a follow-up's job asks the
	// same.
	Resources map[string]string `json:"resources,omitempty"`
}

// RunnerName is the runner the session's supervisor runs under.
func (s *Session) RunnerName() string {
	if s.Job != nil && s.Job.Runner != "" && s.Job.Runner != LocalRunner {
		return s.Job.Runner
	}
	return LocalRunner
}

// Queued says the session waits for its runner to start its supervisor: a
// job in a cluster's queue, behind others or on a drained node, or back
// in it after a preemption (JobQueued, as a reader found it). Nothing of
// it runs, and time there is no time running: a stall, a turn's first
// event and a worker's progress count from the job's start. A session on
// this host is never queued: its supervisor starts at once.
func (s *Session) Queued() bool {
	return s.RunnerName() != LocalRunner && (s.Status() == StatusPending || s.JobQueued && !s.Settled())
}

// Began is when the session's supervisor began its first turn: its
// creation on this host, its job's start under a runner; zero while it
// is queued.
func (s *Session) Began() time.Time {
	switch {
	case len(s.Turns) > 0:
		return s.Turns[0].StartedAt
	case s.Queued():
		return time.Time{}
	}
	return s.CreatedAt
}

// JobAccount is what a cluster's accounting says of one of a session's
// jobs once it ended.
type JobAccount struct {
	ID       string `json:"id"`
	Node     string `json:"node"`
	Elapsed  int64  `json:"elapsed_s"`
	MaxRSS   int64  `json:"max_rss_bytes"`
	CPUs     int    `json:"cpus"`
	ExitCode string `json:"exit_code"` // "code:signal"
	State    string `json:"state"`
}

// CoreHours is the job's CPUs times its elapsed time, in hours.
func (a JobAccount) CoreHours() float64 { return float64(a.CPUs) * float64(a.Elapsed) / 3600 }

// Account is the accounting of job id, if the record has it.
func (s *Session) Account(id string) (JobAccount, bool) {
	for _, a := range s.Accounting {
		if a.ID == id {
			return a, true
		}
	}
	return JobAccount{}, false
}

// Unaccounted are the jobs of s's ended turns whose accounting the record
// lacks, oldest first: once s settles, its last job's too.
func (s *Session) Unaccounted() []string {
	var ids []string
	for _, t := range s.Turns {
		running := !s.Settled() && s.Job != nil && t.Job == s.Job.ID // the job runs on
		if t.Job == "" || running || slices.Contains(ids, t.Job) {
			continue
		}
		if _, ok := s.Account(t.Job); !ok {
			ids = append(ids, t.Job)
		}
	}
	return ids
}

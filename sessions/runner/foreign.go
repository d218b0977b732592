package runner

import (
	"context"
	"fmt"

	"github.com/zwarm/zwarm/sessions/config"
)

// Recorded is a session's job as its record keeps it.
type Recorded struct {
	Session                string // the session, as it is shown (its short id)
	Runner, JobID, Cluster string
}

// ForeignError is a session whose job runs on another cluster than the
// one this machine's commands reach: its id means another job here, so
// nothing is concluded of it nor done to it from here.
type ForeignError struct {
	Recorded
	Here string
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("session %s runs as %s job %s on cluster %s, and this machine's %s commands reach cluster %s: "+
		"act on it from a machine of %s (or point SLURM_CONF at its config)", e.Session, e.Runner, e.JobID, e.Cluster, e.Runner, e.Here, e.Cluster)
}

// Is makes a foreign job a request zwarm cannot carry out as asked here
// (exit code 2): nothing was done.
func (e *ForeignError) Is(target error) bool { return target == config.ErrInvalidRequest }

// CheckCluster says whether job is another cluster's than the one r
// reaches (a *ForeignError); a job recorded without its cluster, or a
// cluster r cannot name, is taken as this one's.
func CheckCluster(ctx context.Context, r Runner, job Recorded) error {
	if job.Cluster == "" {
		return nil
	}
	here := r.Cluster(ctx)
	if here == "" || here == job.Cluster {
		return nil
	}
	return &ForeignError{Recorded: job, Here: here}
}

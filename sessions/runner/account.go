package runner

import (
	"context"
	"errors"
)

// Accountant is a runner whose engine keeps accounts of ended jobs (Slurm
// with slurmdbd): what each job took, which the engine's queue forgets.
type Accountant interface {
	// Accounting says what the engine's accounting says of the given
	// ended jobs, one call for all; a job it has no account of is absent.
	// An engine that keeps no accounts answers ErrNoAccounting.
	Accounting(ctx context.Context, ids []string) (map[string]Account, error)
}

// Account is one ended job's.
type Account struct {
	Node     string
	Elapsed  int64 // seconds
	MaxRSS   int64 // bytes, the job's largest process
	CPUs     int
	ExitCode string // "code:signal"
	State    string
}

// ErrNoAccounting is an engine that keeps no accounts of its jobs.
var ErrNoAccounting = errors.New("the cluster keeps no accounting")

// Package slurm drives a Slurm cluster through its command-line clients
// (sbatch, squeue, scancel, sinfo), the way a person at a login node does:
// it never talks the scheduler's protocol nor re-implements any of it. A
// Client submits a job whose batch step execs one command, reads the state
// of many jobs with one squeue call, signals, kills and cancels them, and
// says whether the controller answers.
//
// Every call runs one command (States and Signal may run two; see there)
// with the process's environment plus Options.Env, so SLURM_CONF=... in
// Options.Env points a Client at a given cluster. Each method's comment
// gives its exact command line.
//
// The package imports nothing of zwarm's: it knows jobs, not sessions.
package slurm

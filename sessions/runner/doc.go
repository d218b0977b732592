// Package runner is the seam between zwarm and a cluster's scheduler: a
// Runner starts a session's supervisor as a job, reports the state of
// many jobs in one call, and stops them; Cache is what the runners said,
// asked at most once a poll for every job of late together; a Batch
// gathers the submissions of workers started together, so that a Batcher
// makes them with one call (a Slurm job array). The local
// runner is not a Runner: it is the session core's own code. The Slurm
// runner lives in runner/slurm.
package runner

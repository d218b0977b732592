package slurm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/runner"
	"golang.org/x/sys/unix"
)

// Settings is config.toml's [runner.slurm] table.
type Settings struct {
	Partition string          `toml:"partition"`
	Account   string          `toml:"account"`
	Time      string          `toml:"time"`
	CPUs      int             `toml:"cpus"`
	Mem       string          `toml:"mem"`
	ExtraArgs []string        `toml:"extra_args"`
	Poll      config.Duration `toml:"poll"`
	// SubmitTimeout bounds one sbatch (a minute by default).
	SubmitTimeout config.Duration `toml:"submit_timeout"`
	// Setup is shell run in each job before the supervisor (module
	// load, a conda env): what it exports reaches the agent.
	Setup string `toml:"setup"`
}

// owned are the sbatch options zwarm sets itself: a job without them is
// not a zwarm worker (its supervisor, its output, its time-limit warning,
// its requeue after a preemption).
var owned = []string{"--wrap", "--output", "-o", "--error", "-e", "--job-name", "-J", "--chdir", "-D",
	"--signal", "--requeue", "--no-requeue", "--parsable", "--array", "-a", "--wait", "-W", "--export"}

// minPoll is the shortest poll interval: every poll is a request to the
// cluster's controller, which is shared.
const minPoll = 250 * time.Millisecond

// check refuses settings that would make jobs zwarm cannot follow, or
// that make no sense.
func (set *Settings) check() error {
	for _, a := range set.ExtraArgs {
		name, _, _ := strings.Cut(a, "=")
		for _, o := range owned {
			// sbatch takes any unambiguous start of a long option
			// ("--no-req" is --no-requeue, "--out" --output).
			abbrev := len(o) > 2 && len(name) > 2 && strings.HasPrefix(name, "--") && strings.HasPrefix(o, name)
			if name == o || abbrev || len(o) == 2 && strings.HasPrefix(a, o) {
				return config.Invalidf("[runner.slurm] extra_args: %s is zwarm's to set (%s: its workers need their own job name, output, directory, time-limit warning and requeue); remove it", a, o)
			}
		}
	}
	// Checked as a spawn's and a role's are, so that a bad value is said
	// here, not by every sbatch; the time is kept in sbatch's form.
	res := map[string]string{}
	for k, v := range map[string]string{"partition": set.Partition, "account": set.Account, "time": set.Time, "mem": set.Mem} {
		if strings.TrimSpace(v) != "" {
			res[k] = v
		}
	}
	if _, err := resourceArgs(res); err != nil {
		return config.Invalidf("[runner.slurm] %s", strings.TrimPrefix(err.Error(), "slurm "))
	}
	if set.Time != "" {
		set.Time, _ = slurmTime(strings.TrimSpace(set.Time))
	}
	if set.CPUs < 0 {
		return config.Invalidf("[runner.slurm] cpus = %d: want a number of CPUs above 0, or leave it out for the cluster's default", set.CPUs)
	}
	if set.SubmitTimeout.Duration < 0 {
		return config.Invalidf("[runner.slurm] submit_timeout = %q: want a duration above 0, or leave it out for a minute", set.SubmitTimeout.Duration)
	}
	if set.Poll.Duration != 0 && set.Poll.Duration < minPoll {
		return config.Invalidf("[runner.slurm] poll = %q: at least %s (each poll asks the cluster's controller)", set.Poll.Duration, minPoll)
	}
	return nil
}

// SettingsKeys describes the table's keys for an error about an unknown one.
const SettingsKeys = "partition, account, time, cpus, mem, extra_args, poll, submit_timeout, setup"

// Kind is the Slurm runner's entry in the registry a front end passes to
// the session manager.
func Kind() runner.Kind {
	return runner.Kind{
		Name:     "slurm",
		Settings: config.Section{New: func() any { return &Settings{} }, Keys: SettingsKeys},
		New: func(v any) (runner.Runner, error) {
			set, _ := v.(*Settings)
			if set == nil {
				set = &Settings{}
			}
			if err := set.check(); err != nil {
				return nil, err
			}
			return NewRunner(*set), nil
		},
	}
}

// NewRunner is the Slurm runner with the given settings.
func NewRunner(set Settings) runner.Runner {
	return &jobs{c: New(Options{Partition: set.Partition, Account: set.Account, Time: set.Time,
		CPUs: set.CPUs, Mem: set.Mem, ExtraArgs: set.ExtraArgs}), poll: set.Poll.Duration, submit: set.SubmitTimeout.Duration, setup: set.Setup}
}

// jobs runs each session's supervisor as one batch job, named
// zwarm-<session id>, whose main process is the supervisor itself.
type jobs struct {
	c      *Client
	poll   time.Duration
	submit time.Duration
	setup  string
}

// Poll is how often a job's state is asked at most.
func (r *jobs) Poll() time.Duration { return r.poll }

func (r *jobs) Start(ctx context.Context, spec runner.Spec) (string, error) {
	// The job starts in the session's dir, which exists: the worker's
	// own directory (a worktree) may be made by the supervisor only.
	id, err := r.c.Submit(ctx, Job{Name: jobName(spec.SessionID), Dir: spec.SessionDir,
		Output: filepath.Join(spec.SessionDir, "slurm"), OutputPattern: "-%j.out", Argv: spec.Argv,
		Setup: r.setup, SetupLog: spec.SetupLog, Resources: spec.Resources})
	if errors.Is(err, ErrUnreachable) {
		return "", fmt.Errorf("slurm: %w: %w", runner.ErrUnreachable, err)
	}
	if err != nil {
		return "", fmt.Errorf("slurm: %w", err)
	}
	return id, nil
}

func (r *jobs) Jobs(ctx context.Context, ids []string) (map[string]runner.JobState, error) {
	states, err := r.c.States(ctx, ids)
	if err != nil {
		if errors.Is(err, ErrUnreachable) {
			return nil, fmt.Errorf("%w: %v", runner.ErrUnreachable, err)
		}
		return nil, err
	}
	out := make(map[string]runner.JobState, len(states))
	for id, st := range states {
		out[id] = jobState(st)
	}
	return out, nil
}

// namePrefix begins the name of every job zwarm submits: zwarm-<session>,
// or zwarm-batch-<batch> for the tasks of a batch's job array.
const (
	namePrefix  = "zwarm-"
	batchPrefix = namePrefix + "batch-"
)

func jobName(session string) string { return namePrefix + session }

func batchJobName(batch string) string { return batchPrefix + batch }

// refName is the name job's job bears.
func refName(job runner.JobRef) string {
	if job.Batch != "" {
		return batchJobName(job.Batch)
	}
	return jobName(job.Session)
}

// jobState is a job's state in the words of the session manager.
func jobState(st State) runner.JobState {
	js := runner.JobState{Phase: runner.Running, Detail: "slurm " + st.ID}
	if batch, ok := strings.CutPrefix(st.Name, batchPrefix); ok {
		js.Batch = batch
	} else if session, ok := strings.CutPrefix(st.Name, namePrefix); ok {
		js.Session = session
	}
	switch {
	case st.Pending():
		js.Phase = runner.Queued
		if st.Reason != "" && st.Reason != "None" {
			js.Detail += " (" + st.Reason + ")"
		}
	case st.Terminal():
		js.Phase, js.Why = runner.Ended, st.Why()
		if st.State == "FAILED" && st.StdOut != "" {
			if _, err := os.Stat(st.Output()); errors.Is(err, fs.ErrNotExist) {
				// Slurm opens it on the node before anything runs: a
				// node that cannot see the session's directory fails
				// the job there, as "JobLaunchFailure".
				js.Why = "its node" + onNodes(st.Nodes) + " could not open the job's output file " + st.Output() +
					": the node cannot reach the state dir, which must be on a file system the nodes share (zwarm doctor checks)"
			} else if last := outputEnd(st.Output()); last != "" {
				// What failed before the supervisor could record
				// anything (a zwarm binary missing on the node, a
				// setup's shell) is said only there.
				js.Why += "; " + st.Output() + " ends: " + last
			}
		}
		// A job the scheduler ended itself (cancelled, at its time
		// limit, out of memory, preempted) is a session stopped from
		// outside: killed. A node lost, or one that never booted, is
		// the work failing for a reason of the machine's, as a command
		// that exits non-zero fails: failed, to be run again.
		switch st.State {
		case "COMPLETED", "FAILED", "NODE_FAIL", "BOOT_FAIL":
		default:
			js.ByEngine = true
		}
	default:
		if st.Nodes != "" {
			js.Detail += " on " + st.Nodes
		}
		if st.State != "RUNNING" {
			// SUSPENDED, STOPPED, COMPLETING...: not quite running.
			js.Detail += " (" + strings.ToLower(st.State) + ")"
		}
	}
	return js
}

func (r *jobs) Stop(ctx context.Context, job runner.JobRef, force bool) error {
	ref := Ref{ID: job.ID, Name: refName(job)}
	if !force {
		err := r.c.Signal(ctx, ref, "TERM")
		if errors.Is(err, ErrPending) {
			// Nothing of it runs yet: it is cancelled.
			return r.c.Cancel(ctx, ref)
		}
		return err
	}
	if err := r.c.Kill(ctx, ref); err != nil {
		return err
	}
	// A queued job has no process to signal: it is cancelled.
	return r.c.Cancel(ctx, ref)
}

func (r *jobs) Cluster(ctx context.Context) string { return r.c.Cluster(ctx) }

func (r *jobs) Find(ctx context.Context, session string) ([]string, error) {
	return r.c.Named(ctx, jobName(session))
}

// SubmitLimit is how long a submission may take before its answer is
// looked for in the queue instead.
func (r *jobs) SubmitLimit() time.Duration { return r.submit }

// Check lists what stops the cluster from running this state dir's
// workers: a missing command, a controller that does not answer, no node
// that can run a job, or a state dir local to this machine (the nodes'
// supervisors must write to it) with a node that is not this machine.
func (r *jobs) Check(ctx context.Context, stateDir string) []string {
	var problems, others []string
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	for _, line := range r.c.Check(ctx) {
		for _, prefix := range []string{"ok: node ", "problem: node "} {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				if name, _, _ := strings.Cut(rest, " "); name != host {
					others = append(others, name)
				}
			}
		}
		if p, ok := strings.CutPrefix(line, "problem: "); ok {
			problems = append(problems, p)
		}
	}
	if why := localOnly(stateDir); why != "" && len(others) > 0 {
		problems = append(problems, fmt.Sprintf("the state dir %s is %s: the cluster's %s (%s) cannot see it; use a directory on a file system they share",
			stateDir, why, plural(len(others), "other node"), strings.Join(others, ", ")))
	}
	return problems
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// localOnly says why a directory is surely local to this machine (under
// /tmp, or on a tmpfs), or "".
func localOnly(dir string) string {
	if dir == "/tmp" || strings.HasPrefix(dir, "/tmp/") {
		return "under /tmp"
	}
	var fs unix.Statfs_t
	if unix.Statfs(dir, &fs) == nil && fs.Type == unix.TMPFS_MAGIC {
		return "on a tmpfs"
	}
	return ""
}

// outputEnd is the last line a job wrote to its output file, "" if none.
func outputEnd(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 4096)
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(0, fi.Size()-int64(len(buf)))
	n, _ := f.ReadAt(buf, off)
	return lastLine(string(buf[:n]))
}

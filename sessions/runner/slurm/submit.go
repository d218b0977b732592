package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/zwarm/zwarm/sessions/config"
)

// Job is one command to run as a batch job.
type Job struct {
	Name   string // job name (sbatch --job-name); shows in squeue
	Dir    string // working directory on the node (sbatch --chdir)
	Output string // file for the batch step's stdout and stderr (sbatch --output), taken literally; no backslash
	// OutputPattern is appended to Output as sbatch's own filename
	// pattern, expanded by sbatch: "-%j.out" names the file after the job.
	OutputPattern string
	Argv          []string // the command; the batch script execs it
	Env           []string // KEY=VALUE exported to the command, on top of sbatch's usual export of the submitter's environment
	// Resources are what the job asks over the Client's Options, by key
	// (config.ResourceKeys): a key here wins over the same Option.
	Resources map[string]string
	// Setup is shell the batch script runs before it execs Argv, in its
	// own shell (what it exports reaches the command), its output
	// appended to SetupLog. If it fails, the command runs all the same,
	// with config.JobSetupExitEnv set to its exit code, and decides.
	Setup, SetupLog string
}

// WarnSignal is what the batch step's main process gets WarnBefore
// seconds before its time limit (sbatch --signal=B:USR1@60). It is a
// warning, not an order: the batch script ignores it, so that it cannot
// end the job early, and the command inherits the ignore; a command that
// wants it installs a handler.
const (
	WarnSignal = "USR1"
	WarnBefore = 60
)

// Submit queues job and returns its id. It runs
//
//	sbatch --parsable --job-name=NAME --requeue --chdir=DIR --output=OUTPUT
//	       --signal=B:USR1@60 --export=ALL [--partition=P] [--account=A] [--time=T]
//	       [--cpus-per-task=N] [--mem=M] [ExtraArgs...]
//
// with the batch script on stdin, and without the SBATCH_* variables of
// the options zwarm sets (ownedEnv): zwarm's own options win over the
// submitter's environment. The script execs Argv, so the command is
// the batch step's main process: scancel --batch (Signal) reaches it, not a
// shell in between. --requeue: a job preempted, or whose node is lost,
// goes back to the queue and runs again under the same id, where the
// command takes up what the last run left (zwarm's supervisor continues
// the agent's thread). sbatch's refusal (a bad partition or account) is
// an error carrying sbatch's own message.
func (c *Client) Submit(ctx context.Context, job Job) (string, error) {
	if len(job.Argv) == 0 {
		return "", errors.New("submit: the job has no command (empty Argv)")
	}
	if err := job.checkPlace(); err != nil {
		return "", err
	}
	script, err := batchScript(job)
	if err != nil {
		return "", fmt.Errorf("submit %s: %w", job.Name, err)
	}
	return c.sbatch(ctx, job, script)
}

// checkPlace refuses a job without the name, directory and output file
// every zwarm job has, or with an output file sbatch would misplace.
func (job Job) checkPlace() error {
	if job.Name == "" || job.Dir == "" || job.Output == "" {
		return fmt.Errorf("submit: the job needs a name, a directory and an output file (got name %q, dir %q, output %q)", job.Name, job.Dir, job.Output)
	}
	if strings.Contains(job.Output, `\`) {
		// sbatch drops every backslash of the name (its "expand nothing"
		// mark): the file would be written somewhere else.
		return fmt.Errorf("submit %s: output file %q holds a backslash, which sbatch would drop: choose a path without one", job.Name, job.Output)
	}
	return nil
}

// sbatch submits script with job's name, directory, output and resources
// over the Client's options, and extra, and returns the job's id.
func (c *Client) sbatch(ctx context.Context, job Job, script string, extra ...string) (string, error) {
	args := []string{
		"--parsable",
		"--job-name=" + job.Name,
		"--requeue",
		"--chdir=" + job.Dir,
		// sbatch expands %j, %x... in the file name; %% is a plain %.
		"--output=" + strings.ReplaceAll(job.Output, "%", "%%") + job.OutputPattern,
		fmt.Sprintf("--signal=B:%s@%d", WarnSignal, WarnBefore),
		// The submitter's environment reaches the job (PATH, the agent's
		// keys), whatever SBATCH_EXPORT says.
		"--export=ALL",
	}
	args = append(args, extra...)
	o := c.opts
	own, err := resourceArgs(job.Resources)
	if err != nil {
		return "", fmt.Errorf("submit %s: %w", job.Name, err)
	}
	for _, d := range []struct{ key, flag, value string }{
		{"partition", "--partition=", o.Partition}, {"account", "--account=", o.Account}, {"time", "--time=", o.Time},
		{"cpus", "--cpus-per-task=", strconv.Itoa(o.CPUs)}, {"mem", "--mem=", o.Mem},
	} {
		if _, asked := job.Resources[d.key]; !asked && d.value != "" && d.value != "0" {
			args = append(args, d.flag+d.value)
		}
	}
	args = append(args, own...)
	args = append(args, o.ExtraArgs...)
	// The job's output file is made by Slurm with the job's umask, which
	// sbatch takes from SLURM_UMASK: 077, as every file of a session is
	// its owner's alone. The script gives the command the submitter's
	// own umask back.
	env := []string{"SLURM_UMASK=0077"}
	for _, k := range ownedEnv {
		env = append(env, k) // a name alone: dropped (runEnv)
	}
	out, err := c.runEnv(ctx, env, script, "sbatch", args...)
	if err != nil {
		return "", fmt.Errorf("submit %s: %w", job.Name, err)
	}
	id, err := parseJobID(out)
	if err != nil {
		return "", fmt.Errorf("submit %s: %w", job.Name, err)
	}
	return id, nil
}

// ownedEnv are sbatch's input variables for the options zwarm sets itself
// (owned): a flag wins over most, but none undoes SBATCH_WAIT or
// SBATCH_ARRAY, and SBATCH_ERROR would take stderr from the job's output.
var ownedEnv = []string{"SBATCH_EXPORT", "SBATCH_WAIT", "SBATCH_ARRAY", "SBATCH_ERROR", "SBATCH_OUTPUT",
	"SBATCH_JOB_NAME", "SBATCH_SIGNAL", "SBATCH_REQUEUE", "SBATCH_NO_REQUEUE"}

// jobIDRe matches a job's id: a job's number, or a job array's task's
// (ARRAY_TASK, as squeue's JobArrayID and sacct print it).
var jobIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+(_[0-9]+)?$`) })

// parseJobID reads sbatch --parsable's answer: "id" or "id;cluster".
func parseJobID(out string) (string, error) {
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	id, _, _ := strings.Cut(strings.TrimSpace(line), ";")
	if !regexp.MustCompile(`^[0-9]+$`).MatchString(id) {
		return "", fmt.Errorf("sbatch --parsable printed %q, not a job id", strings.TrimSpace(out))
	}
	return id, nil
}

var envNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// batchScript is the job's batch script: Slurm's warning ignored, job.Env
// exported, job.Setup run, then exec of job.Argv, every word single-quoted so spaces,
// quotes and $ reach the command as they are.
func batchScript(job Job) (string, error) {
	var b strings.Builder
	if err := writeHead(&b, job.Env); err != nil {
		return "", err
	}
	if job.Setup != "" {
		if job.SetupLog == "" {
			return "", errors.New("the job's setup has no log to write to")
		}
		writeSetup(&b, job.Setup, shellQuote(job.SetupLog))
	}
	argv, err := quoteArgv(job.Argv)
	if err != nil {
		return "", err
	}
	b.WriteString("exec" + argv + "\n")
	return b.String(), nil
}

// writeHead begins a batch script: Slurm's warning ignored, the
// submitter's umask, env exported.
func writeHead(b *strings.Builder, env []string) error {
	b.WriteString("#!/bin/sh\n")
	// Slurm's warning may come as the job starts (a time limit within
	// WarnBefore of it): ignored from the first line, it cannot kill this
	// shell, whose death by a signal Slurm reports as a launch failure.
	// The command inherits the ignore; zwarm's supervisor catches the
	// signal once it listens and asks squeue about a warning it missed.
	fmt.Fprintf(b, "trap '' %s\n", WarnSignal)
	fmt.Fprintf(b, "umask %04o\n", currentUmask())
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !envNameRe().MatchString(k) {
			return fmt.Errorf("job environment entry %q is not NAME=VALUE with a shell variable name", kv)
		}
		if strings.ContainsRune(v, 0) {
			return fmt.Errorf("job environment %s holds a NUL byte", k)
		}
		fmt.Fprintf(b, "export %s=%s\n", k, shellQuote(v))
	}
	return nil
}

// writeSetup runs setup in the script's shell, its output appended to
// the log that the shell word log names; its failure is passed on in
// config.JobSetupExitEnv.
func writeSetup(b *strings.Builder, setup, log string) {
	fmt.Fprintf(b, "echo \"── job $SLURM_JOB_ID on $(hostname): [runner.slurm] setup\" >>%s\n", log)
	fmt.Fprintf(b, "{\n%s\n} </dev/null >>%s 2>&1\n", setup, log)
	fmt.Fprintf(b, "zwarm_setup=$?\nif [ \"$zwarm_setup\" -ne 0 ]; then export %s=\"$zwarm_setup\"; fi\n", config.JobSetupExitEnv)
}

// quoteArgv is argv as shell words, each after a space.
func quoteArgv(argv []string) (string, error) {
	var b strings.Builder
	for _, a := range argv {
		if strings.ContainsRune(a, 0) {
			return "", fmt.Errorf("command argument %q holds a NUL byte", a)
		}
		b.WriteString(" ")
		b.WriteString(shellQuote(a))
	}
	return b.String(), nil
}

// shellQuote quotes s for sh: inside single quotes nothing is special but
// the single quote itself, which closes the quotes, is escaped (\') and
// reopens them.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// currentUmask is this process's umask, as /proc/self/status says
// (reading it with umask(2) would change it for a moment, for every
// thread); 022 where it cannot be read.
func currentUmask() int {
	data, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if m, err := strconv.ParseInt(strings.TrimSpace(v), 8, 32); err == nil {
					return int(m)
				}
			}
		}
	}
	return 0o022
}

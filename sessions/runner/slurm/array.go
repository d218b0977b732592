package slurm

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// SubmitArray queues jobs as the tasks of one job array, with one sbatch:
//
//	sbatch --array=0-N ... (as Submit)
//
// task i running jobs[i]'s command in jobs[i]'s directory, its setup's
// output in jobs[i]'s setup log. What the array asks (resources, setup,
// environment) is array's; its Dir is where the tasks start, before each
// goes to its own, and its Output names every task's output file with
// sbatch's %A (the array's id) and %a (the task's index). It returns the
// tasks' ids, ARRAY_TASK, in jobs' order.
func (c *Client) SubmitArray(ctx context.Context, array Job, jobs []Job) ([]string, error) {
	if len(jobs) == 0 {
		return nil, errors.New("submit: a job array needs a task")
	}
	if err := array.checkPlace(); err != nil {
		return nil, err
	}
	script, err := arrayScript(array, jobs)
	if err != nil {
		return nil, fmt.Errorf("submit %s: %w", array.Name, err)
	}
	id, err := c.sbatch(ctx, array, script, fmt.Sprintf("--array=0-%d", len(jobs)-1))
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(jobs))
	for i := range jobs {
		ids[i] = fmt.Sprintf("%s_%d", id, i)
	}
	return ids, nil
}

// arrayScript is a job array's batch script: as batchScript, with each
// task going first to its own job (SLURM_ARRAY_TASK_ID): its directory,
// its setup log and its command.
func arrayScript(array Job, jobs []Job) (string, error) {
	var b strings.Builder
	if err := writeHead(&b, array.Env); err != nil {
		return "", err
	}
	b.WriteString("case \"$SLURM_ARRAY_TASK_ID\" in\n")
	for i, job := range jobs {
		if len(job.Argv) == 0 || job.Dir == "" {
			return "", fmt.Errorf("task %d has no command or no directory", i)
		}
		if array.Setup != "" && job.SetupLog == "" {
			return "", fmt.Errorf("task %d's setup has no log to write to", i)
		}
		argv, err := quoteArgv(job.Argv)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%d) cd %s || exit 1; zwarm_log=%s; set --%s ;;\n", i, shellQuote(job.Dir), shellQuote(job.SetupLog), argv)
	}
	b.WriteString("*) echo \"zwarm: job array task $SLURM_ARRAY_TASK_ID has no worker\" >&2; exit 1 ;;\nesac\n")
	if array.Setup != "" {
		writeSetup(&b, array.Setup, `"$zwarm_log"`)
	}
	b.WriteString("exec \"$@\"\n")
	return b.String(), nil
}

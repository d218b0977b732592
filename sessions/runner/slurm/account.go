package slurm

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zwarm/zwarm/sessions/runner"
)

// Accounting reads what the cluster's accounting database says of ended
// jobs, with one command:
//
//	sacct -n -P -j ID,ID,... --format=JobID,NodeList,ElapsedRaw,MaxRSS,ExitCode,State,AllocCPUS
//
// The job's own line gives its node, elapsed time, CPUs, exit code and
// state; its steps' lines the largest resident set of its processes. A
// job the database does not have as ended yet is left out, to be asked
// again later. A cluster without accounting (no slurmdbd) is runner.ErrNoAccounting.
func (r *jobs) Accounting(ctx context.Context, ids []string) (map[string]runner.Account, error) {
	out := map[string]runner.Account{}
	if len(ids) == 0 {
		return out, nil
	}
	for _, id := range ids {
		if !jobIDRe().MatchString(id) {
			return nil, fmt.Errorf("sacct: %q is not a job id", id)
		}
	}
	text, err := r.c.run(ctx, "", "sacct", "-n", "-P", "-j", strings.Join(ids, ","),
		"--format=JobID,NodeList,ElapsedRaw,MaxRSS,ExitCode,State,AllocCPUS")
	var ce *CommandError
	if errors.As(err, &ce) && strings.Contains(ce.Stderr, "accounting storage is disabled") {
		return nil, runner.ErrNoAccounting
	}
	if err != nil {
		return nil, fmt.Errorf("job accounting: %w", err)
	}
	return parseAccounting(text, out), nil
}

// parseAccounting reads sacct's lines into out: a job's line, then its
// steps' (ID.batch, ID.extern, ...).
func parseAccounting(text string, out map[string]runner.Account) map[string]runner.Account {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) < 7 {
			continue
		}
		id, step, isStep := strings.Cut(f[0], ".")
		if !jobIDRe().MatchString(id) {
			continue
		}
		a := out[id]
		if rss := rssBytes(f[3]); rss > a.MaxRSS {
			a.MaxRSS = rss
		}
		if !isStep || step == "" {
			a.Node = f[1]
			a.Elapsed, _ = strconv.ParseInt(f[2], 10, 64)
			a.ExitCode = f[4]
			a.State, _, _ = strings.Cut(f[5], " ") // "CANCELLED by 0"
			a.CPUs, _ = strconv.Atoi(f[6])
		}
		out[id] = a
	}
	for id, a := range out {
		if !finalStates[a.State] {
			// The controller tells the database of a job's end in its
			// own time: until then sacct has the job still running (its
			// elapsed time still counting), which is not its account.
			delete(out, id)
		}
	}
	return out
}

// finalStates are sacct's states of a job that has ended for good; what
// it says of a job in any other is not yet the job's account.
var finalStates = map[string]bool{
	"BOOT_FAIL": true, "CANCELLED": true, "COMPLETED": true, "DEADLINE": true, "FAILED": true,
	"NODE_FAIL": true, "OUT_OF_MEMORY": true, "PREEMPTED": true, "TIMEOUT": true,
}

// rssBytes reads sacct's MaxRSS ("66228K", "1.50G", "" before any
// sample) as bytes.
func rssBytes(s string) int64 {
	if s == "" {
		return 0
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'K':
		mult = 1 << 10
	case 'M':
		mult = 1 << 20
	case 'G':
		mult = 1 << 30
	case 'T':
		mult = 1 << 40
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return int64(v * float64(mult))
}

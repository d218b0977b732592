package supervisor

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// warnBefore is how long before its time limit Slurm warns a job's batch
// step (sbatch --signal=B:USR1@60, as the slurm runner submits it).
const warnBefore = 60 * time.Second

// timeLeftWait bounds the question to the scheduler.
const timeLeftWait = 30 * time.Second

// missedWarning reports whether Slurm job job is already within warnBefore
// of its time limit. Slurm sends its warning once; a supervisor that starts
// late on a busy node, or in a job shorter than the warning, may have
// missed it (a Go program ignores SIGUSR1 until it listens for it) and
// would otherwise run on until the scheduler kills it. It asks squeue
// (%L, the time left), again each second while squeue fails (a controller
// too busy to answer in time: "Socket timed out"), and says no when
// squeue cannot tell within timeLeftWait.
func missedWarning(ctx context.Context, job string) bool {
	ctx, cancel := context.WithTimeout(ctx, timeLeftWait)
	defer cancel()
	for {
		out, err := exec.CommandContext(ctx, "squeue", "-h", "-j", job, "-o", "%L").Output()
		if err == nil {
			left, ok := parseTimeLeft(strings.TrimSpace(string(out)))
			return ok && left <= warnBefore
		}
		if errors.Is(err, exec.ErrNotFound) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	}
}

// parseTimeLeft reads squeue's %L: [days-]hours:minutes:seconds,
// minutes:seconds, or a word (UNLIMITED, NOT_SET, INVALID) that is no
// time.
func parseTimeLeft(s string) (time.Duration, bool) {
	var days int
	if d, rest, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, false
		}
		days, s = n, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	total := 0
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, false
		}
		total = total*60 + n
	}
	return time.Duration(days)*24*time.Hour + time.Duration(total)*time.Second, true
}

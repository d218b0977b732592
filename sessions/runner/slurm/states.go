package slurm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// State is what squeue says of one job.
type State struct {
	ID        string
	State     string // squeue's long name: PENDING, RUNNING, COMPLETED, CANCELLED, TIMEOUT, ...
	Reason    string // why it waits or ended: Priority, Resources, ReqNodeNotAvail, NonZeroExitCode, None ...
	Nodes     string // where it runs or ran; empty while pending
	TimeLimit string // as squeue prints it: "1:00", "30:00", "1-00:00:00", "UNLIMITED"
	TimeUsed  string // as squeue prints it: "0:05"
	ExitCode  string // "code:signal" once it ended ("3:0", "0:9"); empty before
	Name      string // the job's name (sbatch --job-name)
	// StdOut is the job's output file as it was asked for, its patterns
	// (%j) not expanded: Output expands them.
	StdOut string
}

// Output is the path of the job's output file, its id and %% expanded.
func (s State) Output() string {
	array, task, _ := strings.Cut(s.ID, "_")
	return strings.NewReplacer("%%", "%", "%j", s.ID, "%A", array, "%a", task).Replace(s.StdOut)
}

// Pending reports a job that waits to start (or to be re-queued).
func (s State) Pending() bool {
	switch s.State {
	case "PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "CONFIGURING":
		return true
	}
	return false
}

// Running reports a job whose batch step has started and not ended: a
// stopped or suspended job, or one completing (its processes being
// cleaned up), still counts.
func (s State) Running() bool {
	switch s.State {
	case "RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT", "RESIZING":
		return true
	}
	return false
}

// Terminal reports a job that has ended for good.
func (s State) Terminal() bool {
	switch s.State {
	case "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
		"BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED":
		return true
	}
	return false
}

// Why is a person's reason for a job that ended: "cancelled by slurm",
// "time limit 00:30:00", "node lost", "out of memory"... It is empty for
// a job that completed or is not over.
func (s State) Why() string {
	switch s.State {
	case "CANCELLED":
		return "cancelled by slurm"
	case "TIMEOUT":
		return "time limit " + clock(s.TimeLimit)
	case "NODE_FAIL":
		return "node lost" + onNodes(s.Nodes)
	case "OUT_OF_MEMORY":
		return "out of memory"
	case "PREEMPTED":
		return "preempted by slurm"
	case "BOOT_FAIL":
		return "node failed to boot" + onNodes(s.Nodes)
	case "DEADLINE":
		return "deadline passed"
	case "FAILED":
		if s.Reason != "" && s.Reason != "None" && s.Reason != "NonZeroExitCode" {
			return "failed: " + s.Reason
		}
		if s.ExitCode != "" {
			return "failed, exit " + s.ExitCode
		}
		return "failed"
	case "SPECIAL_EXIT", "REVOKED":
		return strings.ToLower(s.State)
	}
	return ""
}

func onNodes(nodes string) string {
	if nodes == "" {
		return ""
	}
	return " (" + nodes + ")"
}

// clock writes squeue's [D-][H:]M:S as HH:MM:SS (days as hours), so a
// limit reads the same whatever its length; anything else is kept as is.
func clock(t string) string {
	days := 0
	rest := t
	if d, r, ok := strings.Cut(t, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil {
			return t
		}
		days, rest = n, r
	}
	parts := strings.Split(rest, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return t
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil {
			return t
		}
		n[3-len(parts)+i] = v
	}
	return fmt.Sprintf("%02d:%02d:%02d", days*24+n[0], n[1], n[2])
}

// stateFields is the -O format of States: every field sized to its value
// (":0") and ended by "|", which none of these fields can hold but the
// job's name, which can hold anything but a newline and comes last.
const stateFields = "JobArrayID:0|,State:0|,Reason:0|,NodeList:0|,TimeLimit:0|,TimeUsed:0|,exit_code:0|,STDOUT:0|,Name:0|"

// States reads the state of the given jobs with one command:
//
//	squeue -h -r --states=all -j ID,ID,... -O JobArrayID:0|,State:0|,...,Name:0|
//
// A job squeue no longer knows (it forgets a finished job after the
// cluster's MinJobAge) is absent from the map; what that means is the
// caller's call. squeue fails the whole call with "Invalid job id
// specified" when the ids are not known to it (Slurm 22.05 does so when
// asked for one; others for more); States then makes one more call
// listing the user's own jobs,
//
//	squeue -h -r --states=all --me -O ...
//
// and keeps those asked for. -r gives each task of a job array a line of
// its own, named ARRAY_TASK (squeue would fold the queued ones into one).
// An error wrapping ErrUnreachable means the
// controller did not answer; squeue takes its time to give up (18 s with
// Slurm 22.05's default timeouts), so a caller polling on a schedule bounds
// ctx.
func (c *Client) States(ctx context.Context, ids []string) (map[string]State, error) {
	states := make(map[string]State, len(ids))
	if len(ids) == 0 {
		return states, nil
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		if !jobIDRe().MatchString(id) {
			return nil, fmt.Errorf("squeue: %q is not a job id", id)
		}
		want[id] = true
	}
	out, err := c.run(ctx, "", "squeue", "-h", "-r", "--states=all", "-j", strings.Join(ids, ","), "-O", stateFields)
	var ce *CommandError
	if err != nil && errors.As(err, &ce) && !errors.Is(err, ErrUnreachable) &&
		strings.Contains(ce.Stderr, "Invalid job id specified") {
		out, err = c.run(ctx, "", "squeue", "-h", "-r", "--states=all", "--me", "-O", stateFields)
	}
	if err != nil {
		return nil, fmt.Errorf("job states: %w", err)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		s, err := parseState(line)
		if err != nil {
			return nil, fmt.Errorf("job states: %w", err)
		}
		if want[s.ID] {
			states[s.ID] = s
		}
	}
	return states, nil
}

// parseState reads one line of stateFields.
func parseState(line string) (State, error) {
	f := strings.SplitN(line, "|", 9)
	if len(f) < 9 {
		return State{}, fmt.Errorf("squeue printed %q, not the %d fields asked for", line, 9)
	}
	for i := range 8 {
		f[i] = strings.TrimSpace(f[i])
	}
	s := State{ID: f[0], State: f[1], Reason: f[2], Nodes: f[3], TimeLimit: f[4], TimeUsed: f[5], StdOut: f[7],
		Name: strings.TrimSuffix(strings.TrimRight(f[8], " \r"), "|")}
	if s.Nodes == "(null)" {
		s.Nodes = ""
	}
	if s.Terminal() {
		s.ExitCode = exitCode(f[6])
	}
	return s, nil
}

// number is a job id's number; 0 for none.
func number(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// exitCode turns squeue's raw wait status into Slurm's "code:signal".
func exitCode(raw string) string {
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 {
		return ""
	}
	if n&0x7f != 0 {
		return fmt.Sprintf("0:%d", n&0x7f)
	}
	return fmt.Sprintf("%d:0", n>>8&0xff)
}

// Named lists the jobs of that name squeue knows (queued, running, or
// ended within the cluster's MinJobAge), oldest first:
//
//	squeue -h -r --states=all --name=NAME -O JobArrayID:0|
func (c *Client) Named(ctx context.Context, name string) ([]string, error) {
	out, err := c.run(ctx, "", "squeue", "-h", "-r", "--states=all", "--name="+name, "-O", "JobArrayID:0|")
	if err != nil {
		return nil, fmt.Errorf("jobs named %s: %w", name, err)
	}
	var ids []string
	for _, line := range strings.Split(out, "\n") {
		if id := strings.TrimSuffix(strings.TrimSpace(line), "|"); jobIDRe().MatchString(id) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int {
		x, xt, _ := strings.Cut(a, "_")
		y, yt, _ := strings.Cut(b, "_")
		return cmp.Or(number(x)-number(y), number(xt)-number(yt))
	})
	return ids, nil
}

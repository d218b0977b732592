package slurm

import (
	"context"
	"fmt"
	"strings"
)

// Ping says whether the controller answers:
//
//	sinfo -h -o %T
//
// An error wrapping ErrUnreachable means it does not.
func (c *Client) Ping(ctx context.Context) error {
	if _, err := c.run(ctx, "", "sinfo", "-h", "-o", "%T"); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}

// Check is a doctor's list, one line a finding, each starting "ok: " or
// "problem: ": the binaries found, whether the controller answers, and the
// state of each node
//
//	sinfo -h -N -o %N|%T|%E
//
// in the Client's partition (sinfo -p P when Options.Partition is set).
func (c *Client) Check(ctx context.Context) []string {
	var lines []string
	missing := false
	for _, b := range []string{"sbatch", "squeue", "scancel", "sinfo"} {
		p, err := lookPath(b)
		if err != nil {
			lines = append(lines, "problem: "+err.Error())
			missing = true
			continue
		}
		lines = append(lines, "ok: "+b+" is "+p)
	}
	if missing {
		return lines
	}
	args := []string{"-h", "-N", "-o", "%N|%T|%E"}
	if c.opts.Partition != "" {
		args = append(args, "-p", c.opts.Partition)
	}
	out, err := c.run(ctx, "", "sinfo", args...)
	if err != nil {
		return append(lines, "problem: the controller does not answer: "+err.Error())
	}
	lines = append(lines, "ok: the controller answers")
	nodes := 0
	usable := 0
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(l), "|")
		if !ok || seen[name] {
			continue // sinfo -N lists a node once per partition it is in
		}
		seen[name] = true
		state, reason, _ := strings.Cut(rest, "|")
		nodes++
		if nodeUsable(state) {
			usable++
			lines = append(lines, fmt.Sprintf("ok: node %s is %s", name, state))
			continue
		}
		msg := fmt.Sprintf("problem: node %s is %s", name, state)
		if reason != "" && reason != "none" {
			msg += " (" + reason + ")"
		}
		lines = append(lines, msg)
	}
	where := "the cluster"
	if c.opts.Partition != "" {
		where = "partition " + c.opts.Partition
	}
	switch {
	case nodes == 0:
		lines = append(lines, "problem: "+where+" has no nodes")
	case usable == 0:
		lines = append(lines, "problem: no node of "+where+" can run a job")
	}
	return lines
}

// nodeUsable reports a node state that runs, or will run, jobs. sinfo
// marks states with a suffix (idle*, not responding; mix-, powering
// down...), which is kept in what Check says but not judged here beyond
// "*" (not responding). "+" is a node finishing a job (allocated+), as
// every test's node is now and then.
func nodeUsable(state string) bool {
	if strings.HasSuffix(state, "*") {
		return false
	}
	s := strings.TrimRight(state, "~#!%$@^-+")
	switch s {
	case "idle", "mixed", "allocated", "completing", "planned":
		return true
	}
	return false
}

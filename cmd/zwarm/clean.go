package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/render"
)

type cleanOptions struct {
	f         *factory
	olderThan string
	yes       bool
	dryRun    bool
	force     bool
	worktrees bool
}

func newCleanCmd(f *factory) *cobra.Command {
	o := &cleanOptions{f: f}
	c := &cobra.Command{
		Use:   "clean",
		Short: "Delete settled sessions that ended long ago, with their worktrees (asks first on a terminal)",
		Long: `Delete settled sessions that ended more than --older-than ago, with their
worktrees and branches. A session whose worktree holds work that was never
landed is kept (and named) unless --force. What a spawn or an rm killed
midway left in the state dir goes too, without asking.

With --worktrees, delete instead the worktrees of this repository whose
session is gone (zwarm doctor lists them). Their branches go too, unless a
branch has commits no other branch has: then it is kept (and named), unless
--force.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error { return runClean(c, o) },
	}
	c.Flags().StringVar(&o.olderThan, "older-than", "7d", "age of the end of a session, e.g. 7d, 12h, 30m")
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "list what would be deleted, delete nothing")
	c.Flags().BoolVar(&o.force, "force", false, "delete work that was never landed too")
	c.Flags().BoolVar(&o.worktrees, "worktrees", false, "delete the worktrees of this repository whose session is gone")
	return c
}

func runClean(c *cobra.Command, o *cleanOptions) error {
	if o.worktrees {
		if c.Flags().Changed("older-than") {
			return cli.Usagef("--worktrees removes worktrees whose session is gone, whatever their age: it takes no --older-than")
		}
		return runCleanWorktrees(c, o)
	}
	d, err := parseAge(o.olderThan)
	if err != nil {
		return cli.Usagef("--older-than: %v", err)
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	io := o.f.io
	ctx := c.Context()
	if err := cleanDebris(o, m); err != nil {
		return err
	}
	// Always look first: the question names how many, and --dry-run stops here.
	plan, err := m.Clean(ctx, sessions.CleanOptions{OlderThan: d, DryRun: true, Force: o.force})
	if err != nil {
		return err
	}
	kept := func(res *sessions.CleanResult) error {
		for _, k := range res.Kept {
			fmt.Fprintf(io.ErrOut, "kept %s\n", k.Error())
		}
		if len(res.Kept) > 0 {
			return &cli.SilentError{Code: cli.ExitFailure}
		}
		return nil
	}
	if len(plan.Removed) == 0 {
		fmt.Fprintf(io.ErrOut, "nothing settled more than %s ago to delete\n", o.olderThan)
		return kept(plan)
	}
	if o.dryRun {
		for _, id := range plan.Removed {
			fmt.Fprintf(io.Out, "would remove %s\n", id)
		}
		return kept(plan)
	}
	if err := confirm(io, o.yes, fmt.Sprintf("delete %d sessions that ended more than %s ago, with their worktrees?", len(plan.Removed), o.olderThan), "clean"); err != nil {
		return err
	}
	res, err := m.Clean(ctx, sessions.CleanOptions{OlderThan: d, Force: o.force})
	if res != nil {
		for _, id := range res.Removed {
			fmt.Fprintf(io.Out, "removed %s\n", id)
		}
	}
	if err != nil {
		return err
	}
	return kept(res)
}

// cleanDebris removes (or, with --dry-run, lists) what spawns and
// removals killed midway left in the sessions dir: no session, and not
// the user's to confirm.
func cleanDebris(o *cleanOptions, m *sessions.Manager) error {
	files := m.Store().Files()
	if o.dryRun {
		list, err := files.Debris(time.Now())
		for _, p := range list {
			fmt.Fprintf(o.f.io.Out, "would remove %s\n", render.SafeLine(p))
		}
		return err
	}
	removed, err := files.RemoveDebris(time.Now())
	if len(removed) > 0 {
		fmt.Fprintf(o.f.io.ErrOut, "removed %d directories left by a spawn or an rm killed midway\n", len(removed))
	}
	return err
}

// runCleanWorktrees removes the worktrees whose session is gone.
func runCleanWorktrees(c *cobra.Command, o *cleanOptions) error {
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	io, ctx := o.f.io, c.Context()
	left, err := m.Leftovers(ctx, "")
	if err != nil {
		return err
	}
	if len(left) == 0 {
		fmt.Fprintln(io.ErrOut, "no worktrees whose session is gone")
		return nil
	}
	var total int64
	for _, l := range left {
		total += l.Bytes
	}
	if o.dryRun {
		for _, l := range left {
			fmt.Fprintf(io.Out, "would remove %s\t%s\n", l.Path, humanBytes(l.Bytes))
		}
		return nil
	}
	if err := confirm(io, o.yes, fmt.Sprintf("delete %d worktrees whose session is gone (%s)?", len(left), humanBytes(total)), "clean --worktrees"); err != nil {
		return err
	}
	removed, kept, err := m.CleanLeftovers(ctx, "", o.force)
	for _, l := range removed {
		fmt.Fprintf(io.Out, "removed %s\t%s\n", l.Path, humanBytes(l.Bytes))
	}
	for _, l := range kept {
		fmt.Fprintf(io.ErrOut, "kept branch %s: it has commits no other branch has (git branch -D %s drops it; clean --worktrees --force does too)\n", l.Branch, l.Branch)
	}
	return err
}

// humanBytes is a size as people read it: 512 B, 3.4 MB, 12 GB.
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for v := n / unit; v >= unit; v /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}

// parseAge reads a duration that may be given in days ("7d") or weeks.
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("%q is not an age (want e.g. 7d, 12h, 30m)", s)
			}
			return time.Duration(v * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not an age (want e.g. 7d, 12h, 30m)", s)
	}
	return d, nil
}

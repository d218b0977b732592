package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

type cleanOptions struct {
	f         *factory
	olderThan string
	yes       bool
	dryRun    bool
}

func newCleanCmd(f *factory) *cobra.Command {
	o := &cleanOptions{f: f}
	c := &cobra.Command{
		Use:   "clean",
		Short: "Delete settled sessions that ended long ago (asks first on a terminal)",
		Args:  exactArgs(0, "no arguments"),
		RunE:  func(c *cobra.Command, _ []string) error { return runClean(c, o) },
	}
	c.Flags().StringVar(&o.olderThan, "older-than", "7d", "age of the end of a session, e.g. 7d, 12h, 30m")
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "list what would be deleted, delete nothing")
	return c
}

func runClean(c *cobra.Command, o *cleanOptions) error {
	d, err := parseAge(o.olderThan)
	if err != nil {
		return usagef("--older-than: %v", err)
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	io := o.f.io
	ctx := c.Context()
	// Always look first: the question names how many, and --dry-run stops here.
	doomed, err := m.Clean(ctx, d, true)
	if err != nil {
		return err
	}
	if len(doomed) == 0 {
		fmt.Fprintf(io.errOut, "nothing settled more than %s ago\n", o.olderThan)
		return nil
	}
	if o.dryRun {
		for _, id := range doomed {
			fmt.Fprintf(io.out, "would remove %s\n", id)
		}
		return nil
	}
	if err := confirm(io, o.yes, fmt.Sprintf("delete %d sessions that ended more than %s ago?", len(doomed), o.olderThan), "clean"); err != nil {
		return err
	}
	removed, err := m.Clean(ctx, d, false)
	for _, id := range removed {
		fmt.Fprintf(io.out, "removed %s\n", id)
	}
	return err
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

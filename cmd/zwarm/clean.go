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
}

func newCleanCmd(f *factory) *cobra.Command {
	o := &cleanOptions{f: f}
	c := &cobra.Command{
		Use:   "clean",
		Short: "Delete finished sessions that ended long ago",
		Args:  exactArgs(0, "no arguments"),
		RunE:  func(c *cobra.Command, _ []string) error { return runClean(c, o) },
	}
	c.Flags().StringVar(&o.olderThan, "older-than", "7d", "age of the end of a session, e.g. 7d, 12h, 30m")
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
	removed, err := m.Clean(c.Context(), d, false)
	for _, id := range removed {
		fmt.Fprintf(o.f.io.out, "removed %s\n", id)
	}
	if err == nil && len(removed) == 0 {
		fmt.Fprintf(o.f.io.out, "nothing finished more than %s ago\n", o.olderThan)
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

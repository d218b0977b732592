package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/sessions"
)

type waitOptions struct {
	f       *factory
	ids     []string
	any     bool
	timeout time.Duration
	json    bool
}

func newWaitCmd(f *factory) *cobra.Command {
	o := &waitOptions{f: f}
	c := &cobra.Command{
		Use:   "wait ID...",
		Short: "Block until sessions finish; exit 1 if one failed",
		Args:  minArgs(1, "at least one session id"),
		RunE: func(c *cobra.Command, args []string) error {
			o.ids = args
			return runWait(c, o)
		},
	}
	c.Flags().BoolVar(&o.any, "any", false, "return when the first of them finishes")
	c.Flags().DurationVar(&o.timeout, "timeout", 0, "give up after this long (e.g. 10m); 0 waits forever")
	c.Flags().BoolVar(&o.json, "json", false, "print a JSON array of the sessions")
	return c
}

func runWait(c *cobra.Command, o *waitOptions) error {
	if o.timeout < 0 {
		return usagef("--timeout must not be negative")
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	ctx := c.Context()
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	list, err := m.Wait(ctx, o.ids, sessions.WaitOptions{Any: o.any})
	if errors.Is(err, context.DeadlineExceeded) {
		var running []string
		for _, s := range list {
			if s != nil && !s.Settled() {
				running = append(running, sessions.ShortID(s.ID))
			}
		}
		return fmt.Errorf("timed out after %s; still running: %s", o.timeout, strings.Join(running, " "))
	}
	if err != nil {
		return err
	}
	var done []*sessions.Session
	for _, s := range list {
		if s.Settled() {
			done = append(done, s)
		}
	}
	if o.json {
		if err := writeJSON(o.f.io.out, list); err != nil {
			return err
		}
	} else {
		for _, s := range list {
			printOutcome(o.f.io.out, s)
		}
	}
	return failedExit(done...)
}

package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/sessions"
)

type killOptions struct {
	f   *factory
	ids []string
	all bool
}

func newKillCmd(f *factory) *cobra.Command {
	o := &killOptions{f: f}
	c := &cobra.Command{
		Use:   "kill ID... | --all",
		Short: "Stop sessions and every process they started",
		RunE: func(c *cobra.Command, args []string) error {
			o.ids = args
			if o.all == (len(args) > 0) {
				return usagef("give session ids or --all, not both and not neither")
			}
			return runKill(c, o)
		},
	}
	c.Flags().BoolVar(&o.all, "all", false, "kill every running session")
	return c
}

func runKill(c *cobra.Command, o *killOptions) error {
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	ctx := c.Context()
	ids, err := targets(ctx, m, o.ids, o.all, func(s *sessions.Session) bool { return !s.Settled() })
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		fmt.Fprintln(o.f.io.out, "no running sessions")
		return nil
	}
	// Kills run side by side: each may wait out a grace period.
	errs := make([]error, len(ids))
	done := make([]*sessions.Session, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done[i], errs[i] = m.Kill(ctx, id)
		}()
	}
	wg.Wait()
	for i := range ids {
		if errs[i] == nil {
			fmt.Fprintf(o.f.io.out, "%s %s\n", done[i].ID, done[i].Status)
		}
	}
	return errors.Join(errs...)
}

// targets is the sessions a command acts on: the ids given, or with all,
// every session for which pick is true.
func targets(ctx context.Context, m *sessions.Manager, ids []string, all bool, pick func(*sessions.Session) bool) ([]string, error) {
	if !all {
		return ids, nil
	}
	list, err := m.List(ctx, sessions.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range list {
		if pick(s) {
			out = append(out, s.ID)
		}
	}
	return out, nil
}

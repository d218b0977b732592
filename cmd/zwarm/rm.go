package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/sessions"
)

type rmOptions struct {
	f     *factory
	ids   []string
	all   bool
	force bool
}

func newRmCmd(f *factory) *cobra.Command {
	o := &rmOptions{f: f}
	c := &cobra.Command{
		Use:   "rm ID... | --all",
		Short: "Delete finished sessions and everything they recorded",
		RunE: func(c *cobra.Command, args []string) error {
			o.ids = args
			if o.all == (len(args) > 0) {
				return usagef("give session ids or --all, not both and not neither")
			}
			return runRm(c, o)
		},
	}
	c.Flags().BoolVar(&o.all, "all", false, "delete every finished session")
	c.Flags().BoolVar(&o.force, "force", false, "kill running sessions first instead of refusing")
	return c
}

func runRm(c *cobra.Command, o *rmOptions) error {
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	ctx := c.Context()
	ids, err := targets(ctx, m, o.ids, o.all, func(s *sessions.Session) bool {
		return (s.Settled() || o.force) && !s.Legacy
	})
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		full, err := m.Remove(ctx, id, o.force)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(o.f.io.out, "removed %s\n", full)
	}
	return errors.Join(errs...)
}

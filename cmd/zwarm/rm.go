package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
)

type rmOptions struct {
	f      *factory
	ids    []string
	all    bool
	force  bool
	yes    bool
	dryRun bool
}

// runF, if set, runs instead of the command, with the options the command
// line gave (tests of the flags).
func newRmCmd(f *factory, runF func(*rmOptions) error) *cobra.Command {
	o := &rmOptions{f: f}
	c := &cobra.Command{
		Use:   "rm ID... | --all",
		Short: "Delete settled sessions and everything they recorded",
		RunE: func(c *cobra.Command, args []string) error {
			o.ids = args
			if o.all == (len(args) > 0) {
				return cli.Usagef("give session ids or --all, not both and not neither")
			}
			if runF != nil {
				return runF(o)
			}
			return runRm(c, o)
		},
		ValidArgsFunction: completeIDs(f, func(s *record.Session) bool { return s.Settled() }),
	}
	c.Flags().BoolVar(&o.all, "all", false, "delete every settled session (asks first on a terminal)")
	c.Flags().BoolVar(&o.force, "force", false, "kill running sessions first instead of refusing; remove unreadable ones")
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "do not ask")
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "list what would be deleted, delete nothing")
	return c
}

func runRm(c *cobra.Command, o *rmOptions) error {
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	ctx := c.Context()
	ids, err := targets(ctx, m, o.ids, o.all, func(s *record.Session) bool {
		return (s.Settled() || o.force) && !s.Legacy
	})
	if err != nil {
		return err
	}
	io := o.f.io
	if o.all && len(ids) == 0 {
		fmt.Fprintln(io.ErrOut, "no settled sessions to delete")
		return nil
	}
	if o.dryRun {
		// A dry run answers for each id as rm would: an unknown or
		// ambiguous one, a running one, one with work never landed is
		// refused, with rm's own words.
		var errs []error
		for _, id := range ids {
			if full, err := m.CanRemove(ctx, id, o.force); err != nil {
				errs = append(errs, err)
			} else {
				fmt.Fprintf(io.Out, "would remove %s\n", full)
			}
		}
		return errors.Join(errs...)
	}
	if o.all {
		if err := confirm(o.f.io, o.yes, fmt.Sprintf("delete %d sessions and everything they recorded?", len(ids)), "rm --all"); err != nil {
			return err
		}
	}
	var errs []error
	for _, id := range ids {
		full, err := m.Remove(ctx, id, o.force)
		if o.all && errors.Is(err, sessions.ErrNotFound) {
			continue // removed meanwhile (a clean, another rm): gone, as asked
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(io.Out, "removed %s\n", full)
	}
	return errors.Join(errs...)
}

// confirm asks a yes/no question on a terminal. Without one, and without
// --yes, it refuses: nothing is deleted in bulk without being asked for.
func confirm(io *cli.Streams, yes bool, question, what string) error {
	if yes {
		return nil
	}
	if !io.Interactive() {
		return cli.Usagef("%s deletes without asking only with --yes (not a terminal, so it cannot ask)", what)
	}
	fmt.Fprintf(io.ErrOut, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(io.In).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		fmt.Fprintln(io.ErrOut, "nothing deleted")
		return &cli.SilentError{Code: cli.ExitFailure}
	}
	return nil
}

package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

type diffOptions struct {
	f        *factory
	id       string
	stat     bool
	nameOnly bool
	turn     int
	noPager  bool
}

func newDiffCmd(f *factory) *cobra.Command {
	o := &diffOptions{f: f}
	c := &cobra.Command{
		Use:   "diff ID",
		Short: "Show what a worker changed against its base",
		Long: `Show what a worker changed in its worktree against the commit it started
from, as git diff prints it: what it has not committed yet included, while
it runs. --turn N shows what one turn changed. On a terminal the diff is
coloured and paged ($PAGER, else less); piped, it is git's plain output.`,
		Example: `  zwarm diff 3f2a
  zwarm diff 3f2a --stat
  zwarm diff 3f2a --turn 2
  zwarm diff 3f2a | git apply`,
		Args: exactArgs(1, "one session id (a unique prefix is enough)"),
		RunE: func(c *cobra.Command, args []string) error {
			o.id = args[0]
			return runDiff(c, o)
		},
		ValidArgsFunction: completeIDs(f, func(s *record.Session) bool { return s.Workspace != nil }),
	}
	fl := c.Flags()
	fl.BoolVar(&o.stat, "stat", false, "a diffstat only")
	fl.BoolVar(&o.nameOnly, "name-only", false, "the names of the changed files only")
	fl.IntVar(&o.turn, "turn", 0, "what turn N changed (its commit)")
	fl.BoolVar(&o.noPager, "no-pager", false, "do not page on a terminal")
	return c
}

func runDiff(c *cobra.Command, o *diffOptions) error {
	if o.stat && o.nameOnly {
		return cli.Usagef("--stat and --name-only choose different outputs: give one")
	}
	if o.turn < 0 {
		return cli.Usagef("--turn must be a turn number (1 is the task's)")
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	ios := o.f.io
	// Piped, the patch is for git apply: binary files included.
	opt := workspace.DiffOptions{Width: ios.Width, Binary: !ios.OutTTY}
	switch {
	case o.stat:
		opt.Format = workspace.StatOnly
	case o.nameOnly:
		opt.Format = workspace.NamesOnly
	}
	var out io.Writer = ios.Out
	var pager *cli.Pager
	if ios.OutTTY {
		// What a worker wrote reaches the terminal: its control characters
		// are escaped, and the diff coloured by its grammar.
		if !o.noPager && ios.Process {
			if pager, err = cli.StartPager(); err != nil {
				return err
			}
		}
		if pager != nil {
			out = pager
		}
		out = cli.NewTermSafe(out, ios.Color)
	}
	s, err := m.Diff(c.Context(), o.id, out, sessions.DiffRequest{Turn: o.turn, Options: opt})
	if ts, ok := out.(*cli.TermSafe); ok {
		ts.Flush()
	}
	if pager != nil {
		pager.Close()
	}
	if err != nil {
		return err
	}
	if s.Workspace != nil && s.Workspace.Preparing() {
		fmt.Fprintf(ios.ErrOut, "%s: its worktree is being made; nothing changed yet\n", record.ShortID(s.ID))
	}
	return nil
}

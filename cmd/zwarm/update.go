package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/workspace"
)

type updateOptions struct {
	f    *factory
	id   string
	from string
	wait bool
}

func newUpdateCmd(f *factory) *cobra.Command {
	o := &updateOptions{f: f}
	c := &cobra.Command{
		Use:   "update ID",
		Short: "Merge the base branch's new commits into a worker's branch",
		Long: `Merge the new commits of the branch a settled worker started from (or --from
REF) into the worker's branch, in its worktree, so that its change lands
without conflict. If the merge conflicts, the worker gets a follow-up naming
the files to resolve (its next turn's commit concludes the merge); land it
once that turn has ended.`,
		Example: `  zwarm update 3f2a
  zwarm update 3f2a --from release --wait && zwarm land 3f2a`,
		Args: exactArgs(1, "one session id (a unique prefix is enough)"),
		RunE: func(c *cobra.Command, args []string) error {
			o.id = args[0]
			return runUpdate(c, o)
		},
		ValidArgsFunction: completeIDs(f, func(s *record.Session) bool { return s.Settled() && s.Workspace != nil }),
	}
	c.Flags().StringVar(&o.from, "from", "", "the branch or commit to merge (default: the branch the worker started from)")
	c.Flags().BoolVar(&o.wait, "wait", false, "after a conflict, wait until the worker has resolved it")
	return c
}

func runUpdate(c *cobra.Command, o *updateOptions) error {
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	ios, ctx := o.f.io, c.Context()
	res, err := m.Update(ctx, o.id, o.from)
	if err != nil {
		return err
	}
	id := record.ShortID(res.Session.ID)
	from := render.SafeLine(res.From)
	switch {
	case res.UpToDate:
		fmt.Fprintf(ios.Out, "%s has every commit of %s already (%s)\n", id, from, workspace.Short(res.Commit))
		return nil
	case len(res.Conflict) == 0:
		fmt.Fprintf(ios.Out, "merged %s (%s) into %s: %s; zwarm land %s lands it\n", from, workspace.Short(res.Commit),
			render.SafeLine(res.Session.Workspace.Branch), res.Session.ChangesText(), id)
		return nil
	}
	fmt.Fprintf(ios.Out, "merging %s (%s) into %s conflicts in %s: the worker was asked to resolve them (turn %d)\n",
		from, workspace.Short(res.Commit), id, render.SafeLine(strings.Join(res.Conflict, ", ")), res.FollowUp.Turn)
	if !o.wait {
		fmt.Fprintf(ios.ErrOut, "then: zwarm wait %s && zwarm land %s\n", id, id)
		return nil
	}
	done, err := waitSessions(ctx, ios, m, []string{res.Session.ID}, false, 0, "waiting for "+id+" to resolve the conflict", false)
	if err != nil {
		return err
	}
	s := done[0]
	printOutcome(ios, s)
	if len(s.Workspace.Conflict) > 0 {
		fmt.Fprintf(ios.ErrOut, "zwarm: %s still has conflict markers in %s\n", id, render.SafeLine(strings.Join(s.Workspace.Conflict, ", ")))
		return &cli.SilentError{Code: cli.ExitFailure}
	}
	return failedExit(s)
}

package main

import (
	"fmt"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/workspace"
)

type landOptions struct {
	f                     *factory
	id                    string
	all                   bool
	squash, merge, rebase bool
	message, into, verify string
	dryRun, keep          bool
	verifyTimeout         time.Duration
	out                   cli.JSONFlags
}

func newLandCmd(f *factory) *cobra.Command {
	o := &landOptions{f: f}
	c := &cobra.Command{
		Use: "land ID | --all",
		// A Ctrl+C stops it before it lands, or once the checkout it
		// began is whole (workspace.Advance): never midway.
		Annotations: map[string]string{finishesAnnotation: "true"},
		Short:       "Land a worker's change into the branch checked out here",
		Long: `Land a settled worker's change into the branch checked out where zwarm runs
(or --into BRANCH): by default as one squashed commit whose message is the
task and the worker's last message.

Nothing changes until it is sure to work: a worker still running is refused;
a conflict with the branch is found first (git merge-tree) and refused,
naming the files (zwarm update ID has the worker resolve it); uncommitted
changes of the checkout to files the landing touches are refused and kept.
--verify runs a command on exactly what would land, in a checkout of its
own made for it (never the worker's worktree), in the subdirectory that
matches the one you run land in, and lands only if it passes within
--verify-timeout. Everything it starts is stopped when it ends, and when
land itself ends, however it ends (Ctrl-C, a closed terminal, SIGKILL).
After landing, the worktree and the branch are removed (--keep keeps them).

--all is a merge queue: every completed worker of this repository whose
change is not landed, oldest first, each built on the one before and
verified, stopping at the first that fails.`,
		Example: `  zwarm land 3f2a
  zwarm land 3f2a --dry-run
  zwarm land 3f2a --merge --into release
  zwarm land --all --verify "go test ./..."`,
		Args: maxArgs(1, "one session id, or --all"),
		RunE: func(c *cobra.Command, args []string) error {
			if o.all == (len(args) == 1) {
				return cli.Usagef("give one session id or --all, not both and not neither")
			}
			if len(args) == 1 {
				o.id = args[0]
			}
			return runLand(c, o)
		},
		ValidArgsFunction: completeIDs(f, func(s *record.Session) bool {
			return s.Settled() && s.Workspace != nil && !s.Workspace.LandedNow()
		}),
	}
	fl := c.Flags()
	fl.BoolVar(&o.all, "all", false, "land every completed worker of this repository, one by one (a merge queue)")
	fl.BoolVar(&o.squash, "squash", false, "one commit of the whole change (the default)")
	fl.BoolVar(&o.merge, "merge", false, "a merge commit of the branch and the worker's")
	fl.BoolVar(&o.rebase, "rebase", false, "the worker's commits, replayed on top of the branch")
	fl.StringVarP(&o.message, "message", "m", "", "the commit message (squash, merge)")
	fl.StringVar(&o.into, "into", "", "the branch to land into (default: the one checked out here)")
	fl.StringVar(&o.verify, "verify", "", "a shell command run on exactly what would land (in a checkout of its own, in this directory's counterpart); land only if it passes")
	fl.DurationVar(&o.verifyTimeout, "verify-timeout", workspace.DefaultVerifyTimeout, "stop --verify's command after this long, and land nothing")
	fl.BoolVar(&o.dryRun, "dry-run", false, "check everything, change nothing")
	fl.BoolVar(&o.keep, "keep", false, "keep the worktree and the branch after landing")
	o.out.Add(c, "what was landed as JSON")
	return c
}

// landJSON is one landing as --json prints it.
type landJSON struct {
	SessionID string   `json:"session_id"`
	Into      string   `json:"into"`
	Commit    string   `json:"commit"`
	Strategy  string   `json:"strategy"`
	Files     []string `json:"files"`
	Added     int      `json:"added"`
	Deleted   int      `json:"deleted"`
	Already   bool     `json:"already"`
	Nothing   bool     `json:"nothing"`
	Verified  bool     `json:"verified"`
	Removed   bool     `json:"removed"`
	DryRun    bool     `json:"dry_run"`
}

func (o *landOptions) strategy() (workspace.Strategy, error) {
	var picked []workspace.Strategy
	for _, s := range []struct {
		on bool
		s  workspace.Strategy
	}{{o.squash, workspace.Squash}, {o.merge, workspace.Merge}, {o.rebase, workspace.Rebase}} {
		if s.on {
			picked = append(picked, s.s)
		}
	}
	switch len(picked) {
	case 0:
		return workspace.Squash, nil
	case 1:
		return picked[0], nil
	}
	return "", cli.Usagef("--squash, --merge and --rebase are different ways to land: give one")
}

func runLand(c *cobra.Command, o *landOptions) error {
	strategy, err := o.strategy()
	if err != nil {
		return err
	}
	if o.message != "" && strategy == workspace.Rebase {
		return cli.Usagef("--message names the squash or merge commit; a rebase keeps the worker's own messages")
	}
	if o.all && o.message != "" {
		return cli.Usagef("--message names one landing's commit: it does not go with --all")
	}
	if o.verifyTimeout <= 0 {
		return cli.Usagef("--verify-timeout must be more than 0 (it is %s)", o.verifyTimeout)
	}
	if _, err := o.out.Check(); err != nil {
		return err
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	// A closed terminal (SIGHUP) stops a landing as Ctrl-C does: its
	// verify run is stopped and nothing lands, rather than land dying
	// halfway with the verify's processes left running.
	ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGHUP)
	defer stop()
	ios := o.f.io
	opt := sessions.LandOptions{Strategy: strategy, Into: o.into, Message: o.message, DryRun: o.dryRun, Keep: o.keep,
		Verify: o.verify, VerifyTimeout: o.verifyTimeout}
	if o.verify != "" && !o.dryRun {
		// The verify command's output is progress: it goes to stderr, so
		// stdout stays the result.
		opt.VerifyOut = ios.ErrOut
	}
	if !o.all {
		if o.verify != "" && !o.dryRun && !o.out.On() {
			// Said once it runs: a landing refused first runs none.
			opt.VerifyStarts = func() { fmt.Fprintf(ios.ErrOut, "verifying %s: %s\n", o.id, render.SafeLine(o.verify)) }
		}
		res, err := m.Land(ctx, o.id, opt)
		if err != nil {
			return err
		}
		if o.out.On() {
			return o.out.Write(ios.Out, toLandJSON(res, strategy))
		}
		printLanding(ios, res, strategy)
		return nil
	}
	q, err := m.LandAll(ctx, opt)
	if q == nil {
		return err
	}
	if o.out.On() {
		list := []landJSON{}
		for _, r := range q.Landed {
			list = append(list, toLandJSON(r, strategy))
		}
		if werr := o.out.Write(ios.Out, list); werr != nil {
			return werr
		}
	} else {
		for _, r := range q.Landed {
			printLanding(ios, r, strategy)
		}
	}
	for _, s := range q.Skipped {
		fmt.Fprintf(ios.ErrOut, "skipped %s: it %s (land it by its id if you want it)\n", record.ShortID(s.ID), s.Status().Ended())
	}
	if q.Failed != nil {
		left := make([]string, len(q.Left))
		for i, s := range q.Left {
			left[i] = record.ShortID(s.ID)
		}
		fmt.Fprintf(ios.ErrOut, "zwarm: the queue stopped at %s: %v\n", record.ShortID(q.Failed.ID), render.Safe(q.Err.Error()))
		if len(left) > 0 {
			fmt.Fprintf(ios.ErrOut, "not tried: %s\n", strings.Join(left, " "))
		}
		return &cli.SilentError{Code: exitCodeFor(err)}
	}
	if len(q.Landed) == 0 && !o.out.On() {
		fmt.Fprintln(ios.ErrOut, "nothing to land: no completed worker of this repository has a change that is not landed")
	}
	if o.dryRun && len(q.Left) > 0 && !o.out.On() {
		fmt.Fprintf(ios.ErrOut, "and %d more after it, each checked once the one before has landed\n", len(q.Left))
	}
	return nil
}

func printLanding(ios *cli.Streams, r *sessions.LandResult, strategy workspace.Strategy) {
	id := record.ShortID(r.Session.ID)
	switch {
	case r.Already:
		fmt.Fprintf(ios.Out, "%s is landed already: %s has it as %s\n", id, render.SafeLine(r.Into), workspace.Short(r.Commit))
	case r.Nothing:
		fmt.Fprintf(ios.Out, "%s has nothing to land: %s\n", id, nothingWhy(r))
	case r.DryRun:
		uncommitted := ""
		if r.Uncommitted {
			uncommitted = ", work the worker left uncommitted included (committed when it lands)"
		}
		fmt.Fprintf(ios.Out, "would land %s into %s: %s (%s%s); no conflict\n", id, render.SafeLine(r.Into), r.Stat, strategy, uncommitted)
		for _, f := range r.Files {
			fmt.Fprintf(ios.Out, "  %s\t+%d -%d\n", render.SafeLine(f.Path), f.Added, f.Deleted)
		}
	default:
		verified := ""
		if r.Verified {
			verified = ", verified"
		}
		fmt.Fprintf(ios.Out, "landed %s into %s as %s: %s (%s%s)\n", id, render.SafeLine(r.Into), ios.Paint(cli.Green, workspace.Short(r.Commit)), r.Stat, strategy, verified)
		if !r.Removed {
			fmt.Fprintf(ios.Out, "  its worktree stays at %s\n", render.SafeLine(r.Session.Workspace.Path))
		}
	}
}

func nothingWhy(r *sessions.LandResult) string {
	if r.Stat.Empty() {
		return "the worker changed no file"
	}
	return render.SafeLine(r.Into) + " has all of its change already"
}

func toLandJSON(r *sessions.LandResult, strategy workspace.Strategy) landJSON {
	out := landJSON{SessionID: r.Session.ID, Into: r.Into, Commit: r.Commit, Strategy: string(strategy), Files: []string{},
		Added: r.Stat.Added, Deleted: r.Stat.Deleted, Already: r.Already, Nothing: r.Nothing, Verified: r.Verified,
		Removed: r.Removed, DryRun: r.DryRun}
	for _, f := range r.Files {
		out.Files = append(out.Files, f.Path)
	}
	return out
}

// exitCodeFor is the exit code an error maps to, for one reported already.
func exitCodeFor(err error) int {
	if err == nil {
		return cli.ExitOK
	}
	return cli.Classify(err)
}

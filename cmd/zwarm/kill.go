package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
)

type killOptions struct {
	f       *factory
	ids     []string
	all     bool
	orphans bool
}

func newKillCmd(f *factory) *cobra.Command {
	o := &killOptions{f: f}
	c := &cobra.Command{
		Use:   "kill ID... | --all | --orphans",
		Short: "Stop sessions and every process they started",
		RunE: func(c *cobra.Command, args []string) error {
			o.ids = args
			if o.orphans {
				if o.all || len(args) > 0 {
					return cli.Usagef("--orphans takes no session ids and no --all")
				}
				return runKillOrphans(c.Context(), o)
			}
			if o.all == (len(args) > 0) {
				return cli.Usagef("give session ids, --all or --orphans")
			}
			return runKill(c, o)
		},
		ValidArgsFunction: completeIDs(f, func(s *record.Session) bool { return !s.Settled() }),
	}
	c.Flags().BoolVar(&o.all, "all", false, "kill every running session")
	c.Flags().BoolVar(&o.orphans, "orphans", false, "kill the processes left in the cgroups of sessions whose directory or record is gone, and of runs whose directory is (zwarm doctor lists them)")
	return c
}

func runKillOrphans(ctx context.Context, o *killOptions) error {
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	list, err := m.KillOrphans(ctx)
	for _, orphan := range list {
		what := "removed its empty cgroup"
		if len(orphan.PIDs) > 0 {
			what = "killed pid " + joinPIDs(orphan.PIDs)
		}
		fmt.Fprintf(o.f.io.Out, "orphaned %s: %s\n", orphan.What(), what)
	}
	if len(list) == 0 && err == nil {
		fmt.Fprintln(o.f.io.ErrOut, "no orphaned processes")
	}
	return err
}

func runKill(c *cobra.Command, o *killOptions) error {
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	ctx := c.Context()
	ids, err := targets(ctx, m, o.ids, o.all, func(s *record.Session) bool { return !s.Settled() })
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		fmt.Fprintln(o.f.io.ErrOut, "no running sessions to kill")
		return nil
	}
	// Kills run side by side: each may wait out a grace period, shown
	// on a terminal as it goes.
	what := "killing " + record.ShortID(ids[0])
	if len(ids) > 1 {
		what = fmt.Sprintf("killing %d sessions", len(ids))
	}
	prog := cli.StartProgress(o.f.io, what)
	errs := make([]error, len(ids))
	done := make([]*record.Session, len(ids))
	dropped := make([]int, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := m.KillReport(ctx, id, "")
			done[i], dropped[i], errs[i] = k.Session, len(k.Dropped), err
		}()
	}
	wg.Wait()
	prog.Stop()
	for i := range ids {
		switch {
		case errs[i] == nil:
			fmt.Fprintf(o.f.io.Out, "%s %s\n", record.ShortID(done[i].ID), done[i].Status())
			if dropped[i] > 0 {
				fmt.Fprintf(o.f.io.ErrOut, "%s: %s (zwarm show %s lists them)\n",
					record.ShortID(done[i].ID), render.Dropped(dropped[i]), record.ShortID(done[i].ID))
			}
		case o.all && (errors.Is(errs[i], sessions.ErrNotRunning) || errors.Is(errs[i], sessions.ErrNotFound)):
			// It settled, or went, between the listing and its kill
			// (another kill --all, say): --all asked for nothing to run.
			errs[i] = nil
		case errors.Is(errs[i], sessions.ErrNotRunning) && done[i] != nil:
			errs[i] = fmt.Errorf("kill %s: not running: it %s", record.ShortID(done[i].ID), settledPhrase(done[i], timeNow()))
		}
	}
	return errors.Join(errs...)
}

// settledPhrase says how and when a settled session ended: "completed 4m
// ago".
func settledPhrase(s *record.Session, now time.Time) string {
	what := map[record.Status]string{record.StatusCompleted: "completed", record.StatusFailed: "failed",
		record.StatusKilled: "was killed"}[s.Status()]
	if what == "" {
		what = "is " + string(s.Status())
	}
	if s.EndedAt != nil {
		what += " " + render.Ago(now.Sub(*s.EndedAt))
	}
	return what
}

// targets is the sessions a command acts on: the ids given, or with all,
// every session for which pick is true. Records that cannot be read are
// left out of --all and reported. Every id given is resolved before
// anything is done, so that one wrong among them (exit 2) leaves all
// undone, and a session given twice is acted on once.
func targets(ctx context.Context, m *sessions.Manager, ids []string, all bool, pick func(*record.Session) bool) ([]string, error) {
	if !all {
		return resolveAll(m, ids)
	}
	list, err := m.List(ctx, listing.Options{})
	var le *listing.Error
	if err != nil && !errors.As(err, &le) {
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

// resolveAll resolves ids, each once, in order; every id that cannot be
// is reported.
func resolveAll(m *sessions.Manager, ids []string) ([]string, error) {
	var out []string
	var errs []error
	seen := map[string]bool{}
	for _, id := range ids {
		full, err := m.Resolve(id)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !seen[full]:
			seen[full] = true
			out = append(out, full)
		}
	}
	if len(errs) > 0 {
		if len(ids) > 1 {
			errs = append(errs, errors.New("nothing was done to the other sessions given"))
		}
		return nil, errors.Join(errs...)
	}
	return out, nil
}

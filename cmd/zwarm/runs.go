package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/render"
)

type runsOptions struct {
	f    *factory
	json bool
	now  func() time.Time
}

func newRunsCmd(f *factory) *cobra.Command {
	o := &runsOptions{f: f, now: time.Now}
	c := &cobra.Command{
		Use:   "runs",
		Short: "List orchestrated runs, newest first",
		Long: `runs lists the runs of zwarm orchestrate: id, status (running, completed, failed,
limited, interrupted), steps, workers, tokens and cost of the model and its
workers together, age and task. A run whose process died is shown
interrupted, never running. On a terminal the table is aligned; piped, it is
tab-separated.`,
		Args: exactArgs(0, "no arguments (zwarm runs show ID shows one run)"),
		RunE: func(c *cobra.Command, _ []string) error { return runRuns(o) },
	}
	c.Flags().BoolVar(&o.json, "json", false, "print a JSON array of runs (their run.json)")
	c.AddCommand(newRunsShowCmd(o))
	return c
}

func runRuns(o *runsOptions) error {
	st, err := o.f.store()
	if err != nil {
		return err
	}
	list, err := orchestrator.ListRuns(st.Dir())
	if err != nil && len(list) == 0 {
		return err
	}
	if err != nil {
		fmt.Fprintln(o.f.io.errOut, "zwarm: warning:", err)
	}
	if o.json {
		if list == nil {
			list = []*orchestrator.Record{}
		}
		return writeJSONValue(o.f.io.out, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(o.f.io.out, "no runs (start one with: zwarm orchestrate \"TASK\")")
		return nil
	}
	var tw io.Writer = o.f.io.out
	var flush func() error
	if isTerminalWriter(o.f.io.out) {
		t := tabwriter.NewWriter(o.f.io.out, 0, 0, 2, ' ', 0)
		tw, flush = t, t.Flush
	}
	fmt.Fprintln(tw, "ID\tSTATUS\tSTEPS\tWORKERS\tTOKENS\tCOST\tAGE\tTASK")
	now := o.now()
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\t%s\t%s\t%s\t%s\n", sessions.ShortID(r.ID), r.Status, r.Steps, r.Limits.MaxSteps,
			len(r.Workers), render.Tokens(r.TotalTokens()), totalCost(r), render.Age(now.Sub(r.CreatedAt)), render.SafeLine(render.Clip(r.Task, 60)))
	}
	if flush != nil {
		return flush()
	}
	return nil
}

type runsShowOptions struct {
	*runsOptions
	json bool
}

func newRunsShowCmd(parent *runsOptions) *cobra.Command {
	o := &runsShowOptions{runsOptions: parent}
	c := &cobra.Command{
		Use:   "show ID",
		Short: "Show one run: its steps, its workers and why it stopped",
		Args:  exactArgs(1, "a run id (or unique prefix)"),
		RunE:  func(c *cobra.Command, args []string) error { return runRunsShow(c, o, args[0]) },
	}
	c.Flags().BoolVar(&o.json, "json", false, "print {run, events, workers} as JSON")
	return c
}

func runRunsShow(c *cobra.Command, o *runsShowOptions, id string) error {
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	rec, err := orchestrator.LoadRecord(m.Store().Dir(), id)
	if err != nil {
		return usagef("%v", err)
	}
	events, err := orchestrator.ReadEvents(m.Store().Dir(), rec.ID)
	if err != nil {
		return err
	}
	workers, err := m.List(c.Context(), sessions.ListOptions{Source: sessions.RunSource(rec.ID)})
	var le *sessions.ListError
	if err != nil && !errors.As(err, &le) {
		return err
	}
	if o.json {
		if workers == nil {
			workers = []*sessions.Session{}
		}
		return writeJSONValue(o.f.io.out, map[string]any{"run": rec, "events": events, "workers": workers})
	}
	w := o.f.io.out
	fmt.Fprintf(w, "run %s · %s · %s\n", rec.ID, rec.Status, rec.Model)
	fmt.Fprintf(w, "task: %s\n", render.Safe(rec.Task))
	fmt.Fprintf(w, "dir: %s\n", rec.Dir)
	fmt.Fprintf(w, "steps %d/%d · %s · %s tokens (model %s, workers %s) · started %s ago\n", rec.Steps, rec.Limits.MaxSteps,
		totalCost(rec), render.Tokens(rec.TotalTokens()), render.Tokens(rec.Usage.TotalTokens), render.Tokens(rec.WorkerUsage.TotalTokens), render.Age(o.now().Sub(rec.CreatedAt)))
	if rec.StopReason != "" {
		fmt.Fprintf(w, "stopped: %s\n", render.Safe(rec.StopReason))
	}
	if rec.Summary != "" {
		fmt.Fprintf(w, "summary: %s\n", render.Safe(rec.Summary))
	}
	fmt.Fprintln(w)
	rd := orchestrator.Renderer{MaxSteps: rec.Limits.MaxSteps}
	for _, ev := range events {
		for _, l := range rd.Lines(ev) {
			fmt.Fprintln(w, strings.Repeat("  ", l.Indent)+l.Text)
		}
	}
	fmt.Fprintln(w)
	if len(workers) == 0 {
		fmt.Fprintln(w, "no workers")
		return nil
	}
	return writeSessions(o.f.io, workers, o.now(), false)
}

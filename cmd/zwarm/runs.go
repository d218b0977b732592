package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
)

type runsOptions struct {
	f   *factory
	out cli.JSONFlags
	now func() time.Time
}

// runF, if set, runs instead of the command, with the options the command
// line gave (tests of the flags).
func newRunsCmd(f *factory, runF func(*runsOptions) error) *cobra.Command {
	o := &runsOptions{f: f, now: time.Now}
	c := &cobra.Command{
		Use:   "runs",
		Short: "List orchestrated runs, newest first",
		Long: `runs lists the runs of zwarm orchestrate: id, status (running, waiting,
completed, failed, limited, interrupted), steps, workers, tokens and cost of
the model and its workers together, age and task; on a terminal, a run
waiting for an answer shows its question ("asks: ...") in place of its task
(zwarm runs answer ID answers it). A run whose process died is shown
interrupted, never running. On a terminal the table fits the width; piped,
it is tab-separated and untruncated.`,
		Args: exactArgs(0, "no arguments (zwarm runs show ID shows one run)"),
		RunE: func(c *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(o)
			}
			return runRuns(o)
		},
	}
	o.out.Add(c, "a JSON array of runs")
	c.AddCommand(newRunsShowCmd(f))
	c.AddCommand(newRunsKillCmd(f))
	c.AddCommand(newRunsSayCmd(f))
	c.AddCommand(newRunsAnswerCmd(f))
	return c
}

func runRuns(o *runsOptions) error {
	if _, err := o.out.Check(); err != nil {
		return err
	}
	st, err := o.f.store()
	if err != nil {
		return err
	}
	io := o.f.io
	list, err := runs.ListRuns(st.Dir())
	if err != nil && len(list) == 0 {
		return err
	}
	unreadable := err
	switch {
	case o.out.On():
		if err := o.out.Write(io.Out, runsJSON(list)); err != nil {
			return err
		}
	case len(list) == 0:
		fmt.Fprintln(io.ErrOut, "no runs (start one with: zwarm orchestrate \"TASK\")")
	default:
		if err := writeRuns(io, list, o.now()); err != nil {
			return err
		}
	}
	if unreadable != nil {
		fmt.Fprintln(io.ErrOut, "zwarm:", unreadable)
		return &cli.SilentError{Code: cli.ExitFailure}
	}
	return nil
}

// writeRuns prints the runs' table.
func writeRuns(io *cli.Streams, list []*runs.Record, now time.Time) error {
	t := cli.NewTable(io,
		cli.Column{Title: "ID"}, cli.Column{Title: "STATUS"}, cli.Column{Title: "STEPS"}, cli.Column{Title: "WORKERS", Drop: 2}, cli.Column{Title: "TOKENS", Drop: 3},
		cli.Column{Title: "COST", Drop: 4}, cli.Column{Title: "AGE", RawTitle: "CREATED", Drop: 1}, cli.Column{Title: "TASK", Flex: true},
	)
	for _, r := range list {
		// Piped, a plain number, or "?" when a price is missing: never a
		// part of the sum passed off as the whole.
		cost := cli.Cell{Text: runCost(r), Raw: render.Unpriced}
		if c, known := r.TotalCost(); known {
			cost.Raw = strconv.FormatFloat(c, 'f', -1, 64)
		}
		if r.CostNotYet() {
			cost.Raw = render.Unknown
		}
		t.Add(
			cli.Cell{Text: record.ShortID(r.ID), Raw: r.ID},
			cli.Cell{Text: string(r.Status), SGR: runStatusColor(r.Status)},
			cli.Cell{Text: fmt.Sprintf("%d/%d", r.Steps, r.Limits.MaxSteps)},
			cli.Cell{Text: strconv.Itoa(len(r.Workers))},
			cli.Cell{Text: render.Tokens(r.TotalTokens()), Raw: strconv.FormatInt(r.TotalTokens(), 10)},
			cost,
			cli.Cell{Text: render.Age(now.Sub(r.CreatedAt)), Raw: r.CreatedAt.UTC().Format(time.RFC3339)},
			taskCell(r),
		)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	models, workers := unpricedRunModels(list)
	if len(models) == 0 && workers && io.OutTTY {
		_, err := fmt.Fprintln(io.Out, io.Paint(cli.Dim, render.Unpriced+` no price known for a worker's model (zwarm ls --all shows which): add [prices."MODEL"] to config.toml`))
		return err
	}
	return writePriceFootnote(io, models)
}

// taskCell is a run's task or, on a terminal while it waits for an
// answer, its question; piped, always the task.
func taskCell(r *runs.Record) cli.Cell {
	c := cli.Cell{Text: render.Clip(r.Task, 200), Raw: render.SafeLine(r.Task)}
	if r.Status == runs.StatusWaiting && r.Question != nil {
		c.Text = "asks: " + render.Clip(r.Question.Text, 200)
	}
	return c
}

// unpricedRunModels lists, once each, the orchestrating models without a
// price, and says whether some worker's model has none.
func unpricedRunModels(list []*runs.Record) (models []string, workers bool) {
	seen := map[string]bool{}
	for _, r := range list {
		if r.CostUSD == nil && !seen[r.Model] {
			seen[r.Model] = true
			models = append(models, r.Model)
		}
		workers = workers || (r.WorkerCostUSD == nil && len(r.Workers) > 0)
	}
	return models, workers
}

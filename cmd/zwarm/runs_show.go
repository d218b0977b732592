package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
)

type runsShowOptions struct {
	f   *factory
	out cli.JSONFlags
	now func() time.Time
}

func newRunsShowCmd(f *factory) *cobra.Command {
	o := &runsShowOptions{f: f, now: time.Now}
	c := &cobra.Command{
		Use:   "show ID",
		Short: "Show one run: its steps, its workers and why it stopped",
		Args:  exactArgs(1, "a run id (or unique prefix)"),
		RunE:  func(c *cobra.Command, args []string) error { return runRunsShow(c, o, args[0]) },
	}
	o.out.Add(c, "{run, events, workers} as JSON")
	return c
}

func runRunsShow(c *cobra.Command, o *runsShowOptions, id string) error {
	if _, err := o.out.Check(); err != nil {
		return err
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	rec, err := runs.LoadRecord(m.Store().Dir(), id)
	if err != nil {
		return err // no such run, not a run's id: exit 2; unreadable: 1
	}
	events, err := runs.ReadEvents(m.Store().Dir(), rec.ID)
	if err != nil {
		return err
	}
	workers, err := m.List(c.Context(), listing.Options{Source: record.RunSource(rec.ID)})
	var le *listing.Error
	if err != nil && !errors.As(err, &le) {
		return err
	}
	io := o.f.io
	if o.out.On() {
		if events == nil {
			events = []runs.Event{}
		}
		if err := o.out.Write(io.Out, map[string]any{"run": toRunJSON(rec), "events": events, "workers": cli.ListJSON(workers)}); err != nil {
			return err
		}
		return reportUnreadable(io, le)
	}
	// The first line stands out; the others are plain.
	var head []orchestrator.Line
	add := func(format string, a ...any) {
		kind := orchestrator.LineMessage
		if len(head) == 0 {
			kind = orchestrator.LineHeader
		}
		head = append(head, orchestrator.Line{Kind: kind, Text: fmt.Sprintf(format, a...)})
	}
	add("run %s · %s · %s", rec.ID, rec.Status, render.SafeLine(rec.Model))
	add("task: %s", render.SafeLine(rec.Task))
	add("dir: %s", render.SafeLine(rec.Dir))
	add("steps %d/%d · %s · %s tokens (model %s, workers %s) · started %s", rec.Steps, rec.Limits.MaxSteps, runCost(rec),
		render.Tokens(rec.TotalTokens()), render.Tokens(rec.Usage.TotalTokens), render.Tokens(rec.WorkerUsage.TotalTokens),
		render.When(rec.CreatedAt, o.now()))
	add("trace: %s (zwarm trace %s sends it to a collector)", runs.TraceOf(rec.ID), record.ShortID(rec.ID))
	if q := rec.Question; rec.Status == runs.StatusWaiting && q != nil {
		add("asks: %s", render.SafeLine(q.Text))
		if len(q.Options) > 0 {
			add("options: %s", render.SafeLine(orchestrator.NumberedOptions(q.Options)))
		}
		add("answer with: %s \"...\"", answerCommand(c, rec.ID))
	}
	if n := runs.QueuedCount(runs.RunDir(m.Store().Dir(), rec.ID)); n > 0 {
		when := "before its next model call"
		if !rec.Status.Live() {
			when = "when it is resumed"
		}
		add("%s from you waiting: given to the model %s", render.Plural(n, "message"), when)
	}
	if rec.StopReason != "" {
		add("stopped: %s", render.SafeLine(rec.StopReason))
	}
	if rec.Summary != "" {
		add("summary: %s", render.SafeLine(rec.Summary))
	}
	writeRunLines(io, io.Out, head)
	fmt.Fprintln(io.Out)
	rd := orchestrator.Renderer{MaxSteps: rec.Limits.MaxSteps}
	var story []orchestrator.Line
	for _, ev := range events {
		story = append(story, rd.Lines(ev)...)
	}
	writeRunLines(io, io.Out, story)
	fmt.Fprintln(io.Out)
	if len(workers) == 0 {
		fmt.Fprintln(io.Out, "no workers")
	} else if err := writeSessions(io, workers, o.now(), false, stallConfig(m)); err != nil {
		return err
	}
	return reportUnreadable(io, le)
}

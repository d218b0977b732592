package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/render"
)

type logsOptions struct {
	f      *factory
	id     string
	follow bool
	raw    bool
	turn   int
}

func newLogsCmd(f *factory) *cobra.Command {
	o := &logsOptions{f: f}
	c := &cobra.Command{
		Use:   "logs ID",
		Short: "Print what a session's agent did, or its raw JSONL",
		Example: `  zwarm logs 3f2a -f           # follow a running session live
  zwarm logs 3f2a --raw --turn 2  # the raw JSONL of turn 2`,
		Args: exactArgs(1, "one session id"),
		RunE: func(c *cobra.Command, args []string) error {
			o.id = args[0]
			return runLogs(c, o)
		},
	}
	c.Flags().BoolVarP(&o.follow, "follow", "f", false, "keep printing as the agent works, until the session ends")
	c.Flags().BoolVar(&o.raw, "raw", false, "print the raw JSONL the agent wrote")
	c.Flags().IntVar(&o.turn, "turn", 0, "only this turn (default: all; with --raw: the last)")
	return c
}

func runLogs(c *cobra.Command, o *logsOptions) error {
	if o.turn < 0 {
		return usagef("--turn must be 1 or more")
	}
	if o.raw && o.follow {
		return usagef("--raw and --follow do not go together: follow the rendered log, or read a finished turn raw")
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	ctx := c.Context()
	out := o.f.io.out
	if o.raw {
		s, err := m.Get(ctx, o.id)
		if err != nil {
			return err
		}
		n := o.turn
		if n == 0 {
			n = max(s.Turn, 1)
		}
		path, err := m.RawTurn(ctx, s.ID, n)
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(out, f)
		return err
	}
	err = m.Follow(ctx, o.id, sessions.FollowOptions{Only: o.turn, Live: o.follow}, func(st sessions.Step) {
		switch st.Kind {
		case sessions.StepTurnStarted:
			writeTurnHeader(out, st.Turn)
		case sessions.StepTurnEnded:
			printLines(out, render.TurnEnd(st.Turn, cost(st.Turn.CostUSD)))
		case sessions.StepEvent:
			ev := st.Event
			// Item updates are noise in a log; of the starts, only commands
			// matter (they show what is running now).
			if ev.Phase == sessions.PhaseUpdated || ev.Phase == sessions.PhaseStarted && ev.Type != sessions.EventCommand {
				return
			}
			writeStep(out, ev)
		}
	})
	if errors.Is(err, context.Canceled) {
		return nil // Ctrl-C ends a follow; that is not a failure
	}
	return err
}

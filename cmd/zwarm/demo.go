package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/adapters/replay"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/tui"
)

type demoOptions struct {
	f       *factory
	replays string
	speed   float64
	noTUI   bool
	keep    bool
}

func newDemoCmd(f *factory) *cobra.Command {
	o := &demoOptions{f: f}
	c := &cobra.Command{
		Use:   "demo",
		Short: "Watch zwarm supervise a handful of workers, no API key needed",
		Long: `demo starts real supervised workers that play back recorded agent transcripts
(built into zwarm, or the folder --replays names) with their original pacing,
in a temporary state dir, and opens the dashboard on them. Try the keys: i
sends a follow-up, x kills.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error { return runDemo(c, o) },
	}
	c.Flags().StringVar(&o.replays, "replays", "", "folder of recordings to play instead of the built-in ones")
	c.Flags().Float64Var(&o.speed, "speed", 1, "play the recordings this many times faster")
	c.Flags().BoolVar(&o.noTUI, "no-tui", false, "print the live session list instead of the dashboard")
	c.Flags().BoolVar(&o.keep, "keep", false, "keep the demo's state dir afterwards")
	return c
}

func runDemo(c *cobra.Command, o *demoOptions) error {
	if o.speed <= 0 {
		return usagef("--speed must be positive")
	}
	dir, err := os.MkdirTemp("", "zwarm-demo-")
	if err != nil {
		return err
	}
	recs, err := replay.Stage(dir, o.replays)
	if err != nil {
		os.RemoveAll(dir)
		if o.replays != "" {
			return usagef("--replays: %v", err)
		}
		return err
	}
	o.f.useStateDir(dir)
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	// The workers inherit this: their pacing.
	os.Setenv(replay.SpeedEnv, strconv.FormatFloat(o.speed, 'f', -1, 64))
	ctx := c.Context()
	defer func() {
		// Nothing of the demo outlives it, unless asked to.
		stopAll(context.WithoutCancel(ctx), m)
		if o.keep {
			fmt.Fprintf(o.f.io.errOut, "demo state kept: zwarm --state-dir %s ls\n", dir)
		} else {
			os.RemoveAll(dir)
		}
	}()
	work, err := os.Getwd()
	if err != nil {
		return err
	}
	for _, r := range recs {
		if _, err := m.Spawn(ctx, sessions.SpawnRequest{Task: r.Task, Adapter: replay.Name, Model: r.Model, WorkingDir: work, Source: sessions.UserSource}); err != nil {
			return err
		}
	}
	if o.noTUI {
		return liveList(ctx, o.f, m)
	}
	log, closeLog, err := fileLogger(dir)
	if err != nil {
		return err
	}
	defer closeLog()
	colorProfile()
	return tui.Run(ctx, m, dir, log)
}

// stopAll kills every session still running.
func stopAll(ctx context.Context, m *sessions.Manager) {
	list, _ := m.List(ctx, sessions.ListOptions{})
	for _, s := range list {
		if !s.Settled() {
			m.Kill(ctx, s.ID)
		}
	}
}

// liveList prints the session table whenever a session's status or turn
// changes, until every session has settled.
func liveList(ctx context.Context, f *factory, m *sessions.Manager) error {
	sub, err := m.Subscribe(ctx, sessions.SubscribeOptions{})
	if err != nil {
		return err
	}
	defer sub.Close()
	last := ""
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-sub.C():
			if !ok {
				return sub.Err()
			}
		}
		// Let the updates that arrived together print once.
		for drained := false; !drained; {
			select {
			case <-sub.C():
			default:
				drained = true
			}
		}
		list, err := m.List(ctx, sessions.ListOptions{})
		if err != nil {
			return err
		}
		key, done := "", true
		for _, s := range list {
			key += s.ID + string(s.Status) + strconv.Itoa(s.Turn) + ";"
			done = done && s.Settled()
		}
		if key != last {
			last = key
			writeSessions(f.io, list, timeNow(), false)
			fmt.Fprintln(f.io.out)
		}
		if done {
			return nil
		}
	}
}

package main

import (
	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/adapters/replay"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
)

type replayOptions struct {
	f                    *factory
	speed                float64
	path, thread, prompt string
}

// newReplayCmd is the hidden player the replay adapter runs as its agent.
func newReplayCmd(f *factory) *cobra.Command {
	o := &replayOptions{f: f}
	c := &cobra.Command{
		Use:    adapters.ReplayCommand + " [--speed N] -- RECORDING THREAD PROMPT",
		Hidden: true,
		Args:   exactArgs(3, "a recording, a thread id and a prompt"),
		RunE: func(c *cobra.Command, args []string) error {
			o.path, o.thread, o.prompt = args[0], args[1], args[2]
			code, err := replay.Play(c.Context(), o.f.io.Out, o.path, o.speed, o.thread, o.prompt)
			if err != nil {
				return err
			}
			if code != 0 {
				return &cli.SilentError{Code: code}
			}
			return nil
		},
	}
	c.Flags().Float64Var(&o.speed, "speed", 1, "pacing factor")
	return c
}

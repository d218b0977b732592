package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/sessions"
)

type spawnOptions struct {
	f       *factory
	task    string
	adapter string
	model   string
	dir     string
	sandbox string
	source  string
	wait    bool
	json    bool
}

func newSpawnCmd(f *factory) *cobra.Command {
	o := &spawnOptions{f: f}
	c := &cobra.Command{
		Use:   "spawn [flags] [--] TASK",
		Short: "Start an agent on a task in the background",
		Example: `  zwarm spawn "add a --verbose flag to the CLI"
  zwarm spawn --wait -m gpt-5.1-codex -C ../other "fix the failing test"
  zwarm spawn -- "-v prints nothing: fix it"`,
		Args: minArgs(1, "a task"),
		RunE: func(c *cobra.Command, args []string) error {
			o.task = strings.Join(args, " ")
			return runSpawn(c, o)
		},
	}
	fl := c.Flags()
	fl.StringVar(&o.adapter, "adapter", "", "agent to run (default: config default_adapter, else codex)")
	fl.StringVarP(&o.model, "model", "m", "", "model (default: config, else the adapter's default)")
	fl.StringVarP(&o.dir, "dir", "C", "", "working directory of the agent (default: current)")
	fl.StringVar(&o.sandbox, "sandbox", "", "sandbox mode: read-only, workspace-write, danger-full-access")
	fl.StringVar(&o.source, "source", "", "who started the session (default: user)")
	fl.BoolVar(&o.wait, "wait", false, "block until the turn ends; exit 1 if it failed")
	fl.BoolVar(&o.json, "json", false, "print the session as JSON")
	fl.MarkHidden("source")
	return c
}

func runSpawn(c *cobra.Command, o *spawnOptions) error {
	if strings.TrimSpace(o.task) == "" {
		return usagef("empty task: say what the agent should do, e.g. zwarm spawn \"fix the failing test\"")
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	ctx := c.Context()
	src, err := sessions.ParseSource(o.source)
	if err != nil {
		return usagef("--source: %v", err)
	}
	s, err := m.Spawn(ctx, sessions.SpawnRequest{
		Task: o.task, Adapter: o.adapter, Model: o.model, WorkingDir: o.dir, Sandbox: o.sandbox, Source: src,
	})
	if err != nil {
		return err
	}
	if o.wait {
		done, err := m.Wait(ctx, []string{s.ID}, sessions.WaitOptions{})
		if err != nil {
			return err
		}
		s = done[0]
	}
	if o.json {
		if err := writeJSON(o.f.io.out, s); err != nil {
			return err
		}
	} else if o.wait {
		printOutcome(o.f.io.out, s)
	} else {
		fmt.Fprintln(o.f.io.out, s.ID)
	}
	return failedExit(s)
}

// failedExit makes a session that ended badly the command's failure.
func failedExit(ss ...*sessions.Session) error {
	for _, s := range ss {
		if s.Status == sessions.StatusFailed || s.Status == sessions.StatusKilled {
			return &silentError{code: exitFailure}
		}
	}
	return nil
}

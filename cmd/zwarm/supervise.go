package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/sessions/supervisor"
)

const supervisorCmd = "__supervise"

type superviseOptions struct {
	f      *factory
	detach bool
	id     string
}

// newSuperviseCmd is the hidden command the session manager starts: with
// --detach it starts the supervisor in a new session and exits; without, it
// is the supervisor.
func newSuperviseCmd(f *factory) *cobra.Command {
	o := &superviseOptions{f: f}
	c := &cobra.Command{
		Use:    supervisorCmd + " ID",
		Hidden: true,
		Args:   exactArgs(1, "a session id"),
		RunE: func(c *cobra.Command, args []string) error {
			o.id = args[0]
			return runSupervise(c, o)
		},
	}
	c.Flags().BoolVar(&o.detach, "detach", false, "start the supervisor detached and exit")
	return c
}

func runSupervise(c *cobra.Command, o *superviseOptions) error {
	st, err := o.f.store()
	if err != nil {
		return err
	}
	if o.detach {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		return st.StartDetached(o.id, []string{exe, supervisorCmd, "--state-dir", st.Dir(), o.id}, o.f.io.Out)
	}
	// The supervisor handles SIGTERM and SIGINT itself, recording why it
	// stops before it stops the agent: the command's context, which the
	// same signals cancel, must not race it to the agent.
	return supervisor.Supervise(context.WithoutCancel(c.Context()), supervisor.Options{Store: st, Adapters: adapters.Builtin(), ConfigSections: configSections()}, o.id)
}

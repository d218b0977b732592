package main

import (
	"context"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/supervisor"
)

const supervisorCmd = "__supervise"

type superviseOptions struct {
	f      *factory
	detach bool
	job    bool
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
		// A supervisor stopped by a signal records why and stops its
		// agent: done as asked, it exits 0 (a cluster reads a job that
		// exits non-zero after zwarm kill as failed).
		Annotations: map[string]string{finishesAnnotation: "true"},
		RunE: func(c *cobra.Command, args []string) error {
			o.id = args[0]
			return runSupervise(c, o)
		},
	}
	c.Flags().BoolVar(&o.detach, "detach", false, "start the supervisor detached and exit")
	c.Flags().BoolVar(&o.job, "job", false, "be a batch job's main process: the supervisor runs as its child, and nothing it leaves outlives it")
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
	if o.job {
		// A scheduler that tracks a job's processes by descent would lose
		// the agent of a supervisor killed outright: this process stays
		// the job's main process, and reaps whatever the supervisor leaves.
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		warn := syscall.SIGUSR1 // the scheduler's warning (slurm.WarnSignal), which the batch script ignores
		code, err := proc.Reaped{Argv: []string{exe, supervisorCmd, "--state-dir", st.Dir(), o.id}, Env: os.Environ(),
			Forward: []os.Signal{syscall.SIGTERM, syscall.SIGINT, warn}, Ignore: []os.Signal{warn}}.Run(context.WithoutCancel(c.Context()))
		if err != nil || code == 0 {
			return err
		}
		return &cli.SilentError{Code: code}
	}
	// The supervisor handles SIGTERM and SIGINT itself, recording why it
	// stops before it stops the agent: the command's context, which the
	// same signals cancel, must not race it to the agent.
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return supervisor.Supervise(context.WithoutCancel(c.Context()), supervisor.Options{Store: st, Adapters: adapters.Builtin(),
		ConfigSections: configSections(), GuardArgv: []string{exe, guardCmd}}, o.id)
}

package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/sessions"
)

// streams are the command's standard streams, replaceable in tests.
type streams struct {
	in     io.Reader
	out    io.Writer
	errOut io.Writer
}

func newStreams() *streams { return &streams{in: os.Stdin, out: os.Stdout, errOut: os.Stderr} }

// factory gives commands what they share: streams and the session manager
// for the state dir chosen by the global flag.
type factory struct {
	io       *streams
	stateDir string
}

// StateDirEnv overrides the default state dir.
const StateDirEnv = "ZWARM_STATE_DIR"

func (f *factory) store() (*sessions.Store, error) {
	return sessions.NewStore(f.stateDir)
}

func (f *factory) manager() (*sessions.Manager, error) {
	st, err := f.store()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return sessions.NewManager(sessions.ManagerOptions{
		Store: st, Adapters: adapters.Builtin(), SupervisorArgv: []string{exe, supervisorCmd},
		Warn: func(err error) { fmt.Fprintln(f.io.errOut, "zwarm: warning:", err) },
	}), nil
}

func newRootCmd(io *streams) *cobra.Command {
	f := &factory{io: io}
	def := os.Getenv(StateDirEnv)
	if def == "" {
		def = ".zwarm"
	}
	root := &cobra.Command{
		Use:           "zwarm",
		Short:         "Run coding agents as supervised background workers",
		SilenceUsage:  true,
		SilenceErrors: true,
		Long: `zwarm runs coding agents (the Codex CLI) as supervised background workers,
records everything they print under the state dir, and lets you list, read,
continue and stop them.`,
	}
	root.SetOut(io.out)
	root.SetErr(io.errOut)
	root.PersistentFlags().StringVar(&f.stateDir, "state-dir", def, "state directory (env "+StateDirEnv+")")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		msg := err.Error()
		if strings.Contains(msg, "unknown shorthand flag") || strings.Contains(msg, "unknown flag") {
			msg += " (a task or message that starts with '-' goes after --, e.g. zwarm spawn -- \"-v is broken\")"
		}
		return usagef("%s\nRun '%s --help' for usage.", msg, c.CommandPath())
	})
	root.AddCommand(
		newSpawnCmd(f), newLsCmd(f), newShowCmd(f), newLogsCmd(f), newInjectCmd(f),
		newWaitCmd(f), newKillCmd(f), newRmCmd(f), newCleanCmd(f), newDashCmd(f), newDemoCmd(f), newSuperviseCmd(f), newReplayCmd(f),
		newOrchestrateCmd(f), newRunsCmd(f),
	)
	return root
}

// exactArgs is cobra.ExactArgs reported as a usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s (got %d arguments)\nUsage: %s", c.CommandPath(), what, len(args), c.UseLine())
		}
		return nil
	}
}

func minArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("%s needs %s\nUsage: %s", c.CommandPath(), what, c.UseLine())
		}
		return nil
	}
}

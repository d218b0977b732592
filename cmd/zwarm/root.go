package main

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/runner"
	"github.com/zwarm/zwarm/sessions/runner/slurm"
	"github.com/zwarm/zwarm/sessions/state"
)

// factory gives commands what they share: streams and the session manager
// for the state dir chosen by the global flag.
type factory struct {
	io       *cli.Streams
	stateDir string // the --state-dir flag
	chosen   *stateDirChoice
	// mgr is the manager the command asked for, if it did; toldConfig
	// says a warning already named a broken config (warnBrokenConfig),
	// and configErr is that config's load, read with the manager
	// (configRead says it was).
	mgr        *sessions.Manager
	toldConfig atomic.Bool
	configRead bool
	configErr  error
	// diagnoses says the command reports on whatever the state dir is
	// (doctor), a file where it should be included.
	diagnoses bool
}

// state is the state dir this invocation uses (chooseStateDir).
func (f *factory) state() stateDirChoice {
	if f.chosen == nil {
		c := chooseStateDir(f.stateDir)
		f.chosen = &c
	}
	return *f.chosen
}

// useStateDir makes the command use dir, whatever the flag said.
func (f *factory) useStateDir(dir string) {
	f.chosen = &stateDirChoice{dir, "--state-dir"}
}

func (f *factory) store() (*state.Store, error) {
	c := f.state()
	if !f.diagnoses && isFile(c.dir) {
		// Every command would fail on it, each in its own words, after
		// warning that the config inside it cannot be read.
		if c.from == "--state-dir" || c.from == StateDirEnv {
			return nil, cli.Usagef("state dir %s is a file, not a directory: %s must name a directory (zwarm makes it on first use)", c.dir, c.from)
		}
		return nil, cli.Usagef("state dir %s is a file, not a directory: move it away, or name a directory with --state-dir", c.dir)
	}
	return state.NewStore(c.dir)
}

// isFile reports whether path is there and is not a directory.
func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
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
	f.readConfig(st.Dir())
	f.mgr = sessions.NewManager(sessions.ManagerOptions{
		Store: st, Adapters: adapters.Builtin(), SupervisorArgv: []string{exe, supervisorCmd}, ConfineArgv: []string{exe, confineCmd},
		ConfigSections: configSections(), Runners: runnerKinds(),
		Warn: func(err error) {
			if _, cerr := f.mgr.Config(); cerr != nil && strings.Contains(err.Error(), cerr.Error()) {
				f.toldConfig.Store(true)
			}
			fmt.Fprintln(f.io.ErrOut, "zwarm: warning:", err)
		},
		LockWaiting: func(w state.LockWait) { fmt.Fprintln(f.io.ErrOut, "zwarm:", w) },
	})
	return f.mgr, nil
}

// warnBrokenConfig says, after a command that read the state dir, that
// its config is broken, unless the command said so itself (it refused,
// or warned): every command reports a typo in any table, as the docs
// say, and one that goes on does so with the defaults.
func (f *factory) warnBrokenConfig(cmd *cobra.Command, err error) {
	if f.chosen == nil || f.toldConfig.Load() || cmd == nil || cmd.Hidden || cmd.Annotations[reportsConfigAnnotation] == "true" {
		return // it read no state dir
	}
	if isFile(f.chosen.dir) {
		return // there is no config to read, which the command said
	}
	cerr := f.configErr
	if !f.configRead {
		_, cerr = config.Load(f.chosen.dir, configSections()...)
	}
	if cerr == nil || err != nil && strings.Contains(err.Error(), cerr.Error()) {
		return
	}
	fmt.Fprintf(f.io.ErrOut, "zwarm: warning: %s\nzwarm: what the config sets took its defaults (zwarm doctor checks the config)\n", render.Safe(cerr.Error()))
}

// readConfig loads the config of the state dir at dir for
// warnBrokenConfig, as the command starts to use the state dir: it is the
// config the command ran with. It is read before the command goes on
// (the commented config's TOML, about 0.1 ms): read beside it, on a
// loaded machine the read could come after a typo written while a wait
// waited, which was then blamed on the wait.
func (f *factory) readConfig(dir string) {
	if f.configRead {
		return
	}
	_, f.configErr = config.Load(dir, configSections()...)
	f.configRead = true
}

// reportsConfigAnnotation marks a command that reports the config's
// problems itself (doctor).
const reportsConfigAnnotation = "zwarm/reports-config"

// configSections are the config.toml tables owned by packages other than
// sessions: every command reads the same config, and a typo in any table
// is reported by all of them.
func configSections() []config.Section {
	sections := []config.Section{watcherSection, notifySection}
	sections = append(sections, orchestratorSections...)
	sections = append(sections, runner.Sections(runnerKinds())...)
	return append(sections, mcpSections...)
}

// runnerKinds is the registry of the runners a session's supervisor may
// run under besides this host: a literal list.
func runnerKinds() []runner.Kind {
	return []runner.Kind{slurm.Kind()}
}

// newRootCmd is the whole command tree.
func newRootCmd(f *factory) *cobra.Command { return newRootCmdFor(f, nil) }

// newRootCmdFor is the command tree that runs args: the root and only
// the command args names, when they start with the name of one; the
// whole tree otherwise (help, completion, a flag or a wrong name first,
// where every command may be looked at). Making the other 27 commands,
// their flags and help, is a fifth of what a one-session command does
// after its start.
func newRootCmdFor(f *factory, args []string) *cobra.Command {
	root := newRoot(f)
	if len(args) > 0 {
		if one := commandNamed(args[0]); one != nil {
			root.AddCommand(one(f))
			// The completion command, and the help of its four shells,
			// are not the command asked for.
			root.CompletionOptions.DisableDefaultCmd = true
			return root
		}
	}
	for _, c := range commandTable {
		root.AddCommand(c.make(f))
	}
	// After the commands: the completion scripts are made for them.
	root.InitDefaultCompletionCmd()
	if comp, _, err := root.Find([]string{"completion"}); err == nil && comp != root {
		comp.Args = cobra.ArbitraryArgs // RunE says what is wrong
		comp.RunE = func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("no completion for %q: give bash, zsh, fish or powershell", args[0])
			}
			return c.Help()
		}
	}
	return root
}

// newRoot is the root command, without the commands under it.
func newRoot(f *factory) *cobra.Command {
	io := f.io
	root := &cobra.Command{
		Use:           "zwarm",
		Short:         "Run coding agents as supervised background workers",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       "(from the build)", // printed by the template, from versionString
		Long: `zwarm runs coding agents (the Codex CLI, Claude Code) as supervised background
workers, records everything they print under the state dir, and lets you
list, read, continue and stop them.

The state dir is --state-dir, else $ZWARM_STATE_DIR, else the nearest .zwarm/
in the current directory or above it (zwarm init makes one), else ./.zwarm.

Exit codes: 0 ok; 1 the work failed (a session failed or was killed); 2 the
command line, an id or the config is wrong (nothing ran); 124 a wait timed
out; 130 interrupted.`,
		// Anything that is not a command is a wrong command line (exit 2),
		// with cobra's suggestions.
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return c.Help()
			}
			msg := fmt.Sprintf("unknown command %q", args[0])
			if s := c.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return cli.Usagef("%s\nRun 'zwarm --help' for the commands.", msg)
		},
	}
	root.SuggestionsMinimumDistance = 2
	root.SetVersionTemplate("zwarm {{zwarmVersion}}\n")
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.PersistentFlags().StringVar(&f.stateDir, "state-dir", "", "state directory (default: $"+StateDirEnv+", else the nearest .zwarm above here)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		msg := err.Error()
		if takesText(c) && (strings.Contains(msg, "unknown shorthand flag") || strings.Contains(msg, "unknown flag")) {
			msg += fmt.Sprintf(" (a %s that starts with '-' goes after --, e.g. %s -- \"-v is broken\")", textArg(c), textExample(c))
		}
		if strings.Contains(msg, "missing unit in duration") {
			msg += " (a duration takes a unit: 90s, 10m, 1h30m)"
		}
		return cli.Usagef("%s\nRun '%s --help' for usage.", msg, c.CommandPath())
	})
	// help and completion of something that is not there are a wrong
	// command line (exit 2), not help printed with success.
	root.SetHelpCommand(&cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return cli.Usagef("no help topic %q\nRun 'zwarm --help' for the commands.", strings.Join(args, " "))
			}
			return cmd.Help()
		},
		ValidArgsFunction: func(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
			var names []string
			for _, sub := range root.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
	})
	return root
}

// takesText says a command's arguments are free text (a task, a message),
// where a leading '-' may be meant literally.
func takesText(c *cobra.Command) bool { return c.Name() == "spawn" || c.Name() == "inject" }

// textExample is the command line before a text given after --.
func textExample(c *cobra.Command) string {
	if c.Name() == "spawn" {
		return "zwarm spawn"
	}
	return "zwarm " + c.Name() + " ID"
}

func textArg(c *cobra.Command) string {
	if c.Name() == "spawn" {
		return "task"
	}
	return "message"
}

// exactArgs is cobra.ExactArgs reported as a usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return cli.Usagef("%s takes %s (got %d)\nUsage: %s", c.Name(), what, len(args), c.UseLine())
		}
		return nil
	}
}

func minArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < n {
			return cli.Usagef("%s needs %s\nUsage: %s", c.Name(), what, c.UseLine())
		}
		return nil
	}
}

func maxArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) > n {
			return cli.Usagef("%s takes %s (got %d)\nUsage: %s", c.Name(), what, len(args), c.UseLine())
		}
		return nil
	}
}

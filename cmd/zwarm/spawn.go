package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
)

type spawnOptions struct {
	f        *factory
	task     string
	taskFile string
	adapter  string
	model    string
	dir      string
	sandbox  string
	source   string
	wait     bool
	out      cli.JSONFlags
	// Where the agent works: a worktree of its own (the default in a git
	// repository), or in place.
	inPlace     bool
	base        string
	withChanges bool
	runner      string
	// A role's settings, and the ones that override them.
	role    string
	effort  string
	maxCost float64
	// What its jobs ask of a cluster: --slurm KEY=VALUE, and the two
	// asked most, --slurm-time and --gres.
	slurm     []string
	slurmTime string
	gres      string
	// count workers on the same task, started together.
	count int
}

func newSpawnCmd(f *factory) *cobra.Command {
	o := &spawnOptions{f: f}
	c := &cobra.Command{
		Use:   "spawn [flags] [--] TASK | -f FILE | -",
		Short: "Start an agent on a task in the background",
		Long: `Start an agent on a task in the background and print the session's id. The
task is the arguments, the contents of a file (-f FILE), or standard input
(a lone -).

In a git repository the agent works in a git worktree of its own, on branch
zwarm/<id>, made from HEAD (or --base) outside the repository; its work is
committed at the end of each turn, and zwarm diff and zwarm land review and
land it. --in-place (or [worktrees] isolation = "none") works in the
directory itself, as outside a repository.`,
		Example: `  zwarm spawn "add a --verbose flag to the CLI"
  zwarm spawn --base main "port the fix to main"
  zwarm spawn --with-changes "finish what I started"
  zwarm spawn --in-place "fix the typo in README"
  zwarm spawn --runner slurm "run the whole benchmark suite and fix what fails"
  zwarm spawn --runner slurm --slurm-time 2h --gres gpu:1 --slurm partition=gpu "train the baseline"
  zwarm spawn -n 4 --runner slurm "try a different fix for the flaky test"
  zwarm spawn --role reviewer --reasoning-effort high "review the retry change on this branch"
  zwarm spawn --max-cost 2 "upgrade the HTTP client"
  zwarm spawn --wait -m gpt-5.1-codex -C ../other "fix the failing test"
  zwarm spawn -f task.md
  git diff | zwarm spawn -
  zwarm spawn -- "-v prints nothing: fix it"`,
		RunE: func(c *cobra.Command, args []string) error {
			task, err := taskText(o, args, f.io.In)
			if err != nil {
				return err
			}
			o.task = task
			return runSpawn(c, o)
		},
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	fl := c.Flags()
	fl.StringVarP(&o.taskFile, "file", "f", "", "read the task from this file (- for standard input)")
	fl.StringVar(&o.adapter, "adapter", "", "agent to run: "+strings.Join(publicAdapters(), ", ")+" (default: config default_adapter, else codex)")
	fl.StringVarP(&o.model, "model", "m", "", "model (default: config, else the adapter's default)")
	fl.StringVarP(&o.dir, "dir", "C", "", "working directory of the agent (default: current)")
	fl.StringVar(&o.sandbox, "sandbox", "", "sandbox: read-only, workspace-write, danger-full-access (claude: also a permission mode)")
	fl.StringVar(&o.source, "source", "", "who started the session (default: user)")
	fl.BoolVar(&o.wait, "wait", false, "block until the session settles; exit 1 if it failed")
	fl.BoolVar(&o.inPlace, "in-place", false, "work in the directory itself, not in a worktree of its own")
	fl.StringVar(&o.base, "base", "", "start the worktree from this branch, tag or commit (default: HEAD)")
	fl.BoolVar(&o.withChanges, "with-changes", false, "start the worktree from HEAD with the checkout's uncommitted changes")
	fl.StringVar(&o.runner, "runner", "", "where the supervisor runs: local, slurm (default: config [runner] kind, else local)")
	fl.StringVar(&o.role, "role", "", "start with the settings of config.toml's [roles.NAME]; flags given win over them")
	fl.StringVar(&o.effort, "reasoning-effort", "", "how hard the model thinks: codex none..xhigh, claude low..max (default: the agent's)")
	fl.Float64Var(&o.maxCost, "max-cost", 0, "stop the agent once it has spent more than this many US dollars (needs its model's price)")
	fl.StringArrayVar(&o.slurm, "slurm", nil, "what its Slurm jobs ask, KEY=VALUE, over [runner.slurm] and its role's: "+strings.Join(config.ResourceKeys, ", ")+" (repeatable)")
	fl.StringVar(&o.slurmTime, "slurm-time", "", "its Slurm jobs' time limit: 2h, 90m, or as sbatch --time takes it (--slurm time=...)")
	fl.StringVar(&o.gres, "gres", "", "the generic resources its Slurm jobs ask, as sbatch --gres: gpu:1 (--slurm gres=...)")
	fl.IntVarP(&o.count, "count", "n", 1, "start this many workers on the task, each in its own worktree (slurm: one job array)")
	o.out.Add(c, "the session as JSON (with -n, an array of them)")
	fl.MarkHidden("source")
	completeFlags(c, f)
	return c
}

// spawnInterrupted ends a spawn --wait that a signal interrupted while it
// waited: the worker was started and runs on, so its id is printed as
// without --wait, and the error (printed after "interrupted", exit 130)
// says how to stop it.
func spawnInterrupted(o *spawnOptions, m *sessions.Manager, s *record.Session) error {
	if now, err := m.Get(context.Background(), s.ID); err == nil {
		s = now
	}
	if o.out.On() {
		if err := o.out.Write(o.f.io.Out, cli.ToJSON(s)); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(o.f.io.Out, s.ID)
	}
	short := record.ShortID(s.ID)
	if s.Settled() {
		return fmt.Errorf("session %s is %s", short, s.Status())
	}
	return fmt.Errorf("session %s keeps running in the background: zwarm wait %s waits for it, zwarm kill %s stops it", short, short, short)
}

// taskText is the task from the arguments, -f FILE, or stdin ("-").
func taskText(o *spawnOptions, args []string, in io.Reader) (string, error) {
	switch {
	case o.taskFile != "" && len(args) > 0:
		return "", cli.Usagef("give the task as arguments or with -f FILE, not both")
	case o.taskFile != "" && o.taskFile != "-":
		b, err := os.ReadFile(o.taskFile)
		if err != nil {
			return "", cli.Usagef("-f: %v", err)
		}
		return strings.TrimSpace(string(b)), nil
	case o.taskFile == "-" || len(args) == 1 && args[0] == "-":
		b, err := io.ReadAll(in)
		if err != nil {
			return "", fmt.Errorf("read the task from stdin: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	case len(args) == 0:
		return "", cli.Usagef("spawn needs a task: as arguments, -f FILE, or - to read it from stdin\nUsage: zwarm spawn [flags] [--] TASK")
	}
	return strings.Join(args, " "), nil
}

func runSpawn(c *cobra.Command, o *spawnOptions) error {
	if strings.TrimSpace(o.task) == "" {
		return cli.Usagef("empty task: say what the agent should do, e.g. zwarm spawn \"fix the failing test\"")
	}
	if _, err := o.out.Check(); err != nil {
		return err
	}
	switch {
	case o.inPlace && (o.base != "" || o.withChanges):
		return cli.Usagef("--in-place works in the directory itself: it takes no --base or --with-changes")
	case o.base != "" && o.withChanges:
		return cli.Usagef("--with-changes starts from HEAD and the uncommitted changes on it: it takes no --base")
	case o.maxCost < 0 || math.IsNaN(o.maxCost) || math.IsInf(o.maxCost, 0):
		return cli.Usagef("--max-cost %v: want a number of dollars above 0", o.maxCost)
	case o.count < 1 || o.count > maxCount:
		return cli.Usagef("-n %d: want a number of workers from 1 to %d", o.count, maxCount)
	}
	src, err := record.ParseSource(o.source)
	if err != nil {
		return cli.Usagef("--source: %v", err)
	}
	res, err := resourcesOf(o)
	if err != nil {
		return err
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	ctx := c.Context()
	req := sessions.SpawnRequest{
		Task: o.task, Adapter: o.adapter, Model: o.model, WorkingDir: o.dir, Sandbox: o.sandbox, Source: src,
		Base: o.base, WithChanges: o.withChanges, Runner: o.runner,
		Role: o.role, ReasoningEffort: o.effort, MaxCostUSD: o.maxCost, Resources: res,
	}
	if o.inPlace {
		req.Isolation = config.IsolationNone
	}
	if o.count != 1 {
		return spawnMany(ctx, o, m, req)
	}
	s, err := m.Spawn(ctx, req)
	if err != nil {
		return err
	}
	if o.wait {
		done, err := waitSessions(ctx, o.f.io, m, []string{s.ID}, false, 0, "waiting for "+record.ShortID(s.ID), o.out.On())
		if err != nil && ctx.Err() != nil {
			return spawnInterrupted(o, m, s)
		}
		if err != nil {
			return err
		}
		s = done[0]
		// As zwarm wait does: the [notify] command runs for the session
		// it saw settle, unless another zwarm process ran it already.
		if cfg, err := m.Config(); err == nil {
			if n, err := o.f.notifier(m, cfg, nil, nil); err == nil {
				n.Workers(m.Store().Dir()).Settled(s)
			}
		}
	}
	switch {
	case o.out.On():
		if err := o.out.Write(o.f.io.Out, cli.ToJSON(s)); err != nil {
			return err
		}
	case o.wait:
		fmt.Fprintln(o.f.io.Out, s.ID)
		printOutcome(o.f.io, s)
	default:
		fmt.Fprintln(o.f.io.Out, s.ID)
	}
	return failedExit(s)
}

// resourcesOf is what the spawn's jobs ask of a cluster, from --slurm
// KEY=VALUE, --slurm-time and --gres; their values are the runner's to
// check, and a key none of them knows is refused here.
func resourcesOf(o *spawnOptions) (map[string]string, error) {
	res := map[string]string{}
	for _, kv := range o.slurm {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !slices.Contains(config.ResourceKeys, k) || strings.TrimSpace(v) == "" {
			return nil, cli.Usagef("--slurm %q: want KEY=VALUE, KEY one of %s", kv, strings.Join(config.ResourceKeys, ", "))
		}
		res[k] = v
	}
	for k, v := range map[string]string{"time": o.slurmTime, "gres": o.gres} {
		if v != "" {
			res[k] = v
		}
	}
	if len(res) == 0 {
		return nil, nil
	}
	return res, nil
}

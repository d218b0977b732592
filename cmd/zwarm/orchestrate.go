package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
)

// orchestratorSections are the config.toml tables the orchestrator owns;
// every Manager and supervisor must know them to read config.toml.
var orchestratorSections = []config.Section{orchestrator.ConfigSection()}

type orchestrateOptions struct {
	f          *factory
	taskFile   string
	resume     string
	model      string
	effort     string
	dir        string
	maxSteps   int
	maxCost    float64
	maxTokens  int64
	maxWorkers int
	timeout    time.Duration
	kill       bool
	noAsk      bool
	out        cli.JSONFlags
	pilot      bool // zwarm pilot: only pilot runs resume
}

func newOrchestrateCmd(f *factory) *cobra.Command {
	o := &orchestrateOptions{f: f}
	c := &cobra.Command{
		Use:   "orchestrate [flags] [--] TASK | -  (or --resume ID [INSTRUCTION])",
		Short: "Let a model plan a task, delegate it to workers, verify it and finish",
		Long: `orchestrate gives one task to an orchestrating model (OpenAI Responses API), which
breaks it down, delegates the pieces to Codex / Claude workers, waits for them,
reads what they did, verifies the result with shell commands, and finishes.
Each step is printed as it happens; on a terminal, a spinner on stderr shows
the model thinking. Ctrl+C stops the run and saves it: --resume continues it,
with a new instruction if one is given (also a completed run).
Settings come from [orchestrator] in config.toml; flags win. The API key is
read from OPENAI_API_KEY (or api_key_env).

While it runs, zwarm runs say ID MESSAGE gives the model a message before its
next call. The model may ask you a question (ask_user): the run waits, shown
as waiting in zwarm runs, for the answer typed here (when stdin and stderr
are a terminal) or sent with zwarm runs answer ID ANSWER. Without a terminal
it asks only with [orchestrator] ask = true (the default); --no-ask never.

Exit status: 0 when the model finished the task, 1 when the run failed, hit a
limit or a watcher paused it, 2 for a command line that cannot be run, 130
when Ctrl+C (or SIGTERM) stopped it.`,
		Example: `  zwarm orchestrate "add rate limiting to the API, with tests"
  zwarm orchestrate --task-file task.md --max-cost 5 --timeout 1h
  echo "fix the flaky test" | zwarm orchestrate -
  zwarm orchestrate --resume 7c1e
  zwarm orchestrate --resume 7c1e "now also add metrics"`,
		RunE: func(c *cobra.Command, args []string) error { return runOrchestrate(c, o, args) },
	}
	fl := c.Flags()
	fl.StringVar(&o.taskFile, "task-file", "", "read the task from this file")
	fl.StringVar(&o.resume, "resume", "", "continue the run with this id (or unique prefix)")
	fl.StringVarP(&o.model, "model", "m", "", "orchestrating model (config: model)")
	fl.StringVar(&o.effort, "reasoning-effort", "", "how hard the orchestrating model thinks: minimal, low, medium, high (config: reasoning_effort)")
	fl.StringVarP(&o.dir, "dir", "C", "", "the run's working dir (default: current)")
	fl.IntVar(&o.maxSteps, "max-steps", 0, "most model steps (config: max_steps, default 50)")
	fl.Float64Var(&o.maxCost, "max-cost", 0, "most US dollars for the model and its workers (config: max_cost)")
	fl.Int64Var(&o.maxTokens, "max-tokens", 0, "most tokens for the model and its workers (config: max_tokens)")
	fl.IntVar(&o.maxWorkers, "max-workers", 0, "most workers running at once (config: max_workers, default 4)")
	fl.DurationVar(&o.timeout, "timeout", 0, "wall-clock limit of this invocation, e.g. 1h (config: timeout)")
	fl.BoolVar(&o.kill, "kill-workers-on-exit", false, "stop the run's workers when it ends (config: kill_workers_on_exit)")
	fl.BoolVar(&o.noAsk, "no-ask", false, "never let the model ask you a question (config: ask, for runs without a terminal)")
	o.out.Add(c, "the run's events as JSON (one a line)")
	return c
}

func runOrchestrate(c *cobra.Command, o *orchestrateOptions, args []string) error {
	if _, err := o.out.Check(); err != nil {
		return err
	}
	task, err := o.task(args)
	if err != nil {
		return err
	}
	rs, err := o.setup(c, task)
	if err != nil {
		return err
	}
	defer rs.closeLog()
	m, wc, set, client, log, n := rs.m, rs.wc, rs.set, rs.client, rs.log, rs.n
	p := newStepPrinter(o.f.io, o.f.io.Out, &o.out, set.Limits.MaxSteps, true)
	defer p.close()
	var run *orchestrator.Run
	opt := orchestrator.Options{Sessions: m, StateDir: m.Store().Dir(), Client: client, Settings: set, Tracer: rs.tracer, OnEvent: func(e runs.Event) {
		p.event(e)
		if e.Type == runs.EventQuestion && run != nil {
			n.Notify(orchestrator.AsksEvent(m.Store().Dir(), run.Record().ID, runs.Question{ID: e.QuestionID, Text: e.Text}))
		}
	}, Log: log,
		Notify: n.Workers(m.Store().Dir())}
	ctx := c.Context()
	prompt := askSettings(o.f.io, &opt.Settings, o.noAsk, "")
	if prompt != nil {
		opt.Prompt, p.prompting = prompt.ask, true
	}
	if o.resume != "" {
		id, err := runs.ResolveRun(m.Store().Dir(), o.resume)
		if err != nil {
			return cli.Usagef("--resume: %v", err)
		}
		if task != "" {
			// The new instruction goes through the inbox like any
			// message: given once, after those sent before it.
			if _, err := runs.Send(ctx, runs.RunDir(m.Store().Dir(), id), runs.MessageSay, task, ""); err != nil {
				return fmt.Errorf("give run %s the instruction: %w", record.ShortID(id), err)
			}
		}
		run, err = orchestrator.Resume(ctx, opt, id)
		if err != nil {
			return err
		}
	} else if run, err = orchestrator.Start(ctx, opt, task); err != nil {
		return err
	}
	// The run asks only once it executes: its id is known by then.
	p.hint = answerCommand(c, run.ID())
	if prompt != nil {
		prompt.hint = p.hint
	}
	// The watchers judge every step and follow the run's workers.
	stopWatch := run.Watch(ctx, wc)
	rec, err := run.Execute(ctx)
	stopWatch()
	p.close()
	if err != nil {
		return err
	}
	p.outcome(rec, resumeCommand(c, rec))
	n.Notify(orchestrator.FinishedEvent(m.Store().Dir(), rec))
	if rec.Status != runs.StatusCompleted {
		return &cli.SilentError{Code: cli.ExitFailure}
	}
	return nil
}

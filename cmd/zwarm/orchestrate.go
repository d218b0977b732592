package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/demo"
	"github.com/zwarm/zwarm/orchestrator/model"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/render"
)

// orchestratorSections are the config.toml tables the orchestrator owns;
// every Manager and supervisor must know them to read config.toml.
var orchestratorSections = []sessions.ConfigSection{orchestrator.ConfigSection()}

type orchestrateOptions struct {
	f          *factory
	taskFile   string
	resume     string
	model      string
	dir        string
	maxSteps   int
	maxCost    float64
	maxTokens  int64
	maxWorkers int
	timeout    time.Duration
	kill       bool
	json       bool
}

func newOrchestrateCmd(f *factory) *cobra.Command {
	o := &orchestrateOptions{f: f}
	c := &cobra.Command{
		Use:   "orchestrate [flags] [--] TASK | -",
		Short: "Let a model plan a task, delegate it to workers, verify it and finish",
		Long: `orchestrate gives one task to an orchestrating model (OpenAI Responses API), which
breaks it down, delegates the pieces to Codex / Claude workers, waits for them,
reads what they did, verifies the result with shell commands, and finishes.
Each step is printed as it happens. Ctrl+C stops the run and saves it:
--resume continues it. Settings come from [orchestrator] in config.toml;
flags win. The API key is read from OPENAI_API_KEY (or api_key_env).

Exit status: 0 when the model finished the task, 1 when the run failed, hit a
limit or was interrupted, 2 for a command line that cannot be run.`,
		Example: `  zwarm orchestrate "add rate limiting to the API, with tests"
  zwarm orchestrate --task-file task.md --max-cost 5 --timeout 1h
  echo "fix the flaky test" | zwarm orchestrate -
  zwarm orchestrate --resume 7c1e`,
		RunE: func(c *cobra.Command, args []string) error { return runOrchestrate(c, o, args) },
	}
	fl := c.Flags()
	fl.StringVar(&o.taskFile, "task-file", "", "read the task from this file")
	fl.StringVar(&o.resume, "resume", "", "continue the run with this id (or unique prefix)")
	fl.StringVarP(&o.model, "model", "m", "", "orchestrating model (config: model)")
	fl.StringVarP(&o.dir, "dir", "C", "", "the run's working dir (default: current)")
	fl.IntVar(&o.maxSteps, "max-steps", 0, "most model steps (config: max_steps, default 50)")
	fl.Float64Var(&o.maxCost, "max-cost", 0, "most US dollars for the model and its workers (config: max_cost)")
	fl.Int64Var(&o.maxTokens, "max-tokens", 0, "most tokens for the model and its workers (config: max_tokens)")
	fl.IntVar(&o.maxWorkers, "max-workers", 0, "most workers running at once (config: max_workers, default 4)")
	fl.DurationVar(&o.timeout, "timeout", 0, "wall-clock limit of this invocation, e.g. 1h (config: timeout)")
	fl.BoolVar(&o.kill, "kill-workers-on-exit", false, "stop the run's workers when it ends (config: kill_workers_on_exit)")
	fl.BoolVar(&o.json, "json", false, "print the run's events as JSON lines instead of steps")
	return c
}

func runOrchestrate(c *cobra.Command, o *orchestrateOptions, args []string) error {
	task, err := o.task(args)
	if err != nil {
		return err
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	cfg, err := m.Config()
	if err != nil {
		return err
	}
	oc := orchestrator.FromConfig(cfg)
	if err := o.apply(c, oc); err != nil {
		return err
	}
	set, err := o.settings(c, m.Store().Dir(), oc)
	if err != nil {
		return err
	}
	client, err := openAIClient(oc)
	if err != nil {
		return err
	}
	log, closeLog, err := fileLogger(m.Store().Dir())
	if err != nil {
		return err
	}
	defer closeLog()
	p := newStepPrinter(o.f.io.out, o.f.io.errOut, o.json, set.Limits.MaxSteps)
	defer p.close()
	opt := orchestrator.Options{Sessions: m, StateDir: m.Store().Dir(), Client: client, Settings: set, OnEvent: p.event, Log: log}
	ctx := c.Context()
	var run *orchestrator.Run
	if o.resume != "" {
		run, err = orchestrator.Resume(ctx, opt, o.resume)
	} else {
		run, err = orchestrator.Start(ctx, opt, task)
	}
	if err != nil {
		return err
	}
	rec, err := run.Execute(ctx)
	p.close()
	if err != nil {
		return err
	}
	p.outcome(rec, resumeCommand(c, rec))
	if rec.Status != orchestrator.StatusCompleted {
		return &silentError{code: exitFailure}
	}
	return nil
}

// task reads the task from the arguments, a file or stdin; a resumed run
// takes none.
func (o *orchestrateOptions) task(args []string) (string, error) {
	joined := strings.TrimSpace(strings.Join(args, " "))
	switch {
	case o.resume != "" && (joined != "" || o.taskFile != ""):
		return "", usagef("--resume continues a run with its own task: give no task with it")
	case o.resume != "" && o.dir != "":
		return "", usagef("--resume continues a run in its own dir: --dir cannot change it")
	case o.resume != "":
		return "", nil
	case o.taskFile != "" && joined != "":
		return "", usagef("give the task as an argument or with --task-file, not both")
	case o.taskFile != "":
		b, err := os.ReadFile(o.taskFile)
		if err != nil {
			return "", usagef("--task-file: %v", err)
		}
		joined = strings.TrimSpace(string(b))
	case joined == "-":
		b, err := io.ReadAll(o.f.io.in)
		if err != nil {
			return "", fmt.Errorf("read the task from stdin: %w", err)
		}
		joined = strings.TrimSpace(string(b))
	}
	if joined == "" {
		return "", usagef("no task: say what to do, e.g. zwarm orchestrate \"add rate limiting to the API, with tests\" (or --task-file F, or - for stdin)")
	}
	return joined, nil
}

// apply puts the flags that were given over the config.
func (o *orchestrateOptions) apply(c *cobra.Command, oc *orchestrator.Config) error {
	fl := c.Flags()
	if fl.Changed("model") {
		oc.Model = o.model
	}
	if fl.Changed("max-steps") {
		oc.MaxSteps = o.maxSteps
	}
	if fl.Changed("max-cost") {
		oc.MaxCost = o.maxCost
	}
	if fl.Changed("max-tokens") {
		oc.MaxTokens = o.maxTokens
	}
	if fl.Changed("max-workers") {
		oc.MaxWorkers = o.maxWorkers
	}
	if fl.Changed("timeout") {
		if o.timeout < 0 {
			return usagef("--timeout cannot be negative")
		}
		oc.Timeout = sessions.Duration{Duration: o.timeout}
	}
	if fl.Changed("kill-workers-on-exit") {
		oc.KillWorkersOnExit = o.kill
	}
	if err := oc.Validate(); err != nil {
		return usagef("%v (flags count as their config keys)", err)
	}
	return nil
}

// settings are the run's: the config with the flags, and for a resumed run
// what it recorded, unless a flag says otherwise.
func (o *orchestrateOptions) settings(c *cobra.Command, stateDir string, oc *orchestrator.Config) (orchestrator.Settings, error) {
	if o.resume == "" {
		dir, err := filepath.Abs(firstNonEmpty(o.dir, "."))
		if err != nil {
			return orchestrator.Settings{}, err
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return orchestrator.Settings{}, usagef("--dir %s is not a directory", dir)
		}
		return oc.Settings(dir), nil
	}
	rec, err := orchestrator.LoadRecord(stateDir, o.resume)
	if err != nil {
		return orchestrator.Settings{}, usagef("--resume: %v", err)
	}
	switch rec.Status {
	case orchestrator.StatusCompleted:
		return orchestrator.Settings{}, usagef("run %s is completed: there is nothing to resume; start a new run", sessions.ShortID(rec.ID))
	case orchestrator.StatusRunning:
		return orchestrator.Settings{}, usagef("run %s is running (process %d): stop it first (Ctrl+C in its terminal) or let it finish", sessions.ShortID(rec.ID), rec.Owner.PID)
	}
	set := oc.Settings(rec.Dir)
	fl := c.Flags()
	if !fl.Changed("model") {
		set.Model = rec.Model
		set.ContextWindow = oc.Window(rec.Model)
	}
	keep := rec.Limits
	for flag, apply := range map[string]func(){
		"max-steps": func() { keep.MaxSteps = set.Limits.MaxSteps }, "max-cost": func() { keep.MaxCostUSD = set.Limits.MaxCostUSD },
		"max-tokens": func() { keep.MaxTokens = set.Limits.MaxTokens }, "max-workers": func() { keep.MaxWorkers = set.Limits.MaxWorkers },
		"timeout": func() { keep.Timeout = set.Limits.Timeout },
	} {
		if fl.Changed(flag) {
			apply()
		}
	}
	set.Limits = keep
	set.Adapter, set.WorkerModel = rec.Adapter, rec.WorkerModel
	if !fl.Changed("kill-workers-on-exit") {
		set.KillWorkersOnExit = rec.KillWorkersOnExit
	}
	if rec.Status == orchestrator.StatusLimited && rec.Steps >= set.Limits.MaxSteps {
		return set, usagef("run %s has used its %d steps: resume it with a higher --max-steps", sessions.ShortID(rec.ID), rec.Steps)
	}
	return set, nil
}

// openAIClient is the Responses API client of the config: its base URL
// (else OPENAI_BASE_URL), its key from api_key_env (OPENAI_API_KEY).
func openAIClient(oc *orchestrator.Config) (*model.OpenAI, error) {
	env := firstNonEmpty(oc.APIKeyEnv, orchestrator.DefaultAPIKeyEnv)
	key := os.Getenv(env)
	if key == "" && oc.BaseURL == "" && os.Getenv("OPENAI_BASE_URL") == "" {
		return nil, usagef("no API key: set %s (or name another variable with api_key_env in the [orchestrator] table of config.toml)", env)
	}
	return model.NewOpenAI(model.OpenAIOptions{BaseURL: oc.BaseURL, APIKey: key, MaxRetries: oc.Retries,
		MaxRetryDelay: oc.RetryMaxDelay.Duration, RequestTimeout: oc.RequestTimeout.Duration}), nil
}

// resumeCommand is the command line that continues rec.
func resumeCommand(c *cobra.Command, rec *orchestrator.Record) string {
	cmd := "zwarm"
	if c.Flags().Changed("state-dir") {
		cmd += " --state-dir " + shellWord(c.Flag("state-dir").Value.String())
	}
	cmd += " orchestrate --resume " + sessions.ShortID(rec.ID)
	if rec.Status == orchestrator.StatusLimited && rec.Steps >= rec.Limits.MaxSteps {
		cmd += fmt.Sprintf(" --max-steps %d", rec.Limits.MaxSteps*2)
	}
	return cmd
}

func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// runOrchestratedDemo runs the orchestrated task of zwarm demo with m (a
// demo state dir): the recorded model delegates to replay workers in
// workDir, waits, checks one, looks at the workspace and finishes. Its
// steps are printed to out as zwarm orchestrate prints them (nil: nothing
// is printed, e.g. under the dashboard). speed scales the recorded
// thinking time; the workers' pacing follows ZWARM_REPLAY_SPEED.
func runOrchestratedDemo(ctx context.Context, m *sessions.Manager, workDir string, speed float64, out io.Writer) (*orchestrator.Record, error) {
	if err := demo.StageWorkers(m.Store().Dir()); err != nil {
		return nil, err
	}
	client, err := demo.NewModel(speed)
	if err != nil {
		return nil, err
	}
	set := orchestrator.Settings{Model: demo.ModelName(), Dir: workDir, Adapter: "replay", Limits: orchestrator.Limits{MaxSteps: 10, MaxWorkers: 4}}
	opt := orchestrator.Options{Sessions: m, StateDir: m.Store().Dir(), Client: client, Settings: set}
	var p *stepPrinter
	if out != nil {
		p = newStepPrinter(out, io.Discard, false, set.Limits.MaxSteps)
		opt.OnEvent = p.event
		defer p.close()
	}
	run, err := orchestrator.Start(ctx, opt, demo.Task())
	if err != nil {
		return nil, err
	}
	rec, err := run.Execute(ctx)
	if err == nil && p != nil {
		p.close()
		p.outcome(rec, "zwarm orchestrate --resume "+sessions.ShortID(rec.ID))
	}
	return rec, err
}

// stepPrinter prints a run's events as they happen: steps for people, or
// JSON lines. A spinner on stderr shows the model thinking, only on a
// terminal and without NO_COLOR.
type stepPrinter struct {
	out, errOut io.Writer
	json        bool
	maxSteps    int
	render      orchestrator.Renderer
	spin        *spinner
}

func newStepPrinter(out, errOut io.Writer, asJSON bool, maxSteps int) *stepPrinter {
	p := &stepPrinter{out: out, errOut: errOut, json: asJSON, maxSteps: maxSteps, render: orchestrator.Renderer{MaxSteps: maxSteps}}
	if !asJSON && os.Getenv("NO_COLOR") == "" && isTerminalWriter(errOut) {
		p.spin = &spinner{w: errOut}
	}
	return p
}

func (p *stepPrinter) event(ev orchestrator.Event) {
	if p.json {
		json.NewEncoder(p.out).Encode(ev)
		return
	}
	if ev.Limits != nil {
		p.maxSteps = ev.Limits.MaxSteps
	}
	if ev.Type == orchestrator.EventModelCall {
		p.spin.start(fmt.Sprintf("step %d/%d · the model is thinking", ev.Step, p.maxSteps))
		return
	}
	if ev.Type == orchestrator.EventStopped {
		return // outcome prints the end
	}
	p.spin.stop()
	for _, l := range p.render.Lines(ev) {
		fmt.Fprintln(p.out, strings.Repeat("  ", l.Indent)+l.Text)
	}
}

// outcome prints how the run ended and, unless it completed, how to
// continue it.
func (p *stepPrinter) outcome(rec *orchestrator.Record, resume string) {
	if !p.json {
		fmt.Fprintf(p.out, "\n%s after %d steps · %s · %s tokens · %s\n", rec.Status, rec.Steps, totalCost(rec),
			render.Tokens(rec.TotalTokens()), plural(len(rec.Workers), "worker"))
		if rec.Status == orchestrator.StatusCompleted {
			fmt.Fprintln(p.out, rec.Summary)
		} else {
			fmt.Fprintln(p.out, rec.StopReason)
		}
	}
	if rec.Status != orchestrator.StatusCompleted {
		fmt.Fprintf(p.errOut, "resume with: %s\n", resume)
	}
}

// totalCost is the cost of a run and its workers, for people.
func totalCost(rec *orchestrator.Record) string {
	c, known := rec.TotalCost()
	s := render.Cost(&c)
	if !known {
		s += " (some prices unknown)"
	}
	return s
}

func (p *stepPrinter) close() { p.spin.stop() }

// spinner animates one line on a terminal until stopped. Its goroutine is
// owned by start and stop: stop waits for it.
type spinner struct {
	w    io.Writer
	mu   sync.Mutex
	quit chan struct{}
	done chan struct{}
}

func (s *spinner) start(label string) {
	if s == nil {
		return
	}
	s.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quit, s.done = make(chan struct{}), make(chan struct{})
	go func(quit, done chan struct{}) {
		defer close(done)
		frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
		began := time.Now()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(s.w, "\r%c %s %s", frames[i%len(frames)], label, time.Since(began).Round(time.Second))
			select {
			case <-quit:
				fmt.Fprint(s.w, "\r\033[K")
				return
			case <-t.C:
			}
		}
	}(s.quit, s.done)
}

func (s *spinner) stop() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.quit != nil {
		close(s.quit)
		<-s.done
		s.quit = nil
	}
}

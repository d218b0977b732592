package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/model"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/telemetry"
	"github.com/zwarm/zwarm/watchers"
	"github.com/zwarm/zwarm/watchers/notify"
)

// task reads the task from the arguments, a file or stdin. With --resume
// it is the run's new instruction, and may be empty.
func (o *orchestrateOptions) task(args []string) (string, error) {
	joined := strings.TrimSpace(strings.Join(args, " "))
	switch {
	case o.resume != "" && o.dir != "":
		return "", cli.Usagef("--resume continues a run in its own dir: --dir cannot change it")
	case o.taskFile != "" && joined != "":
		return "", cli.Usagef("give the task as an argument or with --task-file, not both")
	case o.taskFile != "":
		b, err := os.ReadFile(o.taskFile)
		if err != nil {
			return "", cli.Usagef("--task-file: %v", err)
		}
		joined = strings.TrimSpace(string(b))
	case joined == "-":
		b, err := io.ReadAll(o.f.io.In)
		if err != nil {
			return "", fmt.Errorf("read the task from stdin: %w", err)
		}
		joined = strings.TrimSpace(string(b))
	}
	switch {
	case o.resume != "" && len(joined) > runs.MaxMessageBytes:
		return "", cli.Usagef("the instruction is %d bytes; at most %d fit", len(joined), runs.MaxMessageBytes)
	case o.resume != "":
		return joined, nil
	case joined == "":
		return "", cli.Usagef("no task: say what to do, e.g. zwarm orchestrate \"add rate limiting to the API, with tests\" (or --task-file F, or - for stdin)")
	}
	return joined, nil
}

// apply puts the flags that were given over the config.
func (o *orchestrateOptions) apply(c *cobra.Command, oc *orchestrator.Config) error {
	fl := c.Flags()
	if fl.Changed("model") {
		oc.Model = o.model
	}
	if fl.Changed("reasoning-effort") {
		oc.ReasoningEffort = o.effort
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
			return cli.Usagef("--timeout cannot be negative")
		}
		oc.Timeout = config.Duration{Duration: o.timeout}
	}
	if fl.Changed("kill-workers-on-exit") {
		oc.KillWorkersOnExit = o.kill
	}
	if err := oc.Validate(); err != nil {
		return cli.Usagef("%v (flags count as their config keys)", err)
	}
	return nil
}

// settings are the run's: the config with the flags, and for a resumed run
// what it recorded, unless a flag says otherwise.
func (o *orchestrateOptions) settings(c *cobra.Command, stateDir string, oc *orchestrator.Config, instruction string) (orchestrator.Settings, error) {
	if o.resume == "" {
		dir, err := filepath.Abs(firstNonEmpty(o.dir, "."))
		if err != nil {
			return orchestrator.Settings{}, err
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return orchestrator.Settings{}, cli.Usagef("--dir %s is not a directory", dir)
		}
		return oc.Settings(dir), nil
	}
	rec, err := runs.LoadRecord(stateDir, o.resume)
	if err != nil {
		return orchestrator.Settings{}, fmt.Errorf("--resume: %w", err)
	}
	switch {
	case rec.Pilot && !o.pilot:
		return orchestrator.Settings{}, cli.Usagef("run %s is a pilot conversation: zwarm pilot --resume %s continues it", record.ShortID(rec.ID), record.ShortID(rec.ID))
	case !rec.Pilot && o.pilot:
		return orchestrator.Settings{}, cli.Usagef("run %s is not a pilot conversation: zwarm orchestrate --resume %s continues it", record.ShortID(rec.ID), record.ShortID(rec.ID))
	case rec.Status == runs.StatusCompleted && instruction == "" && runs.QueuedCount(runs.RunDir(stateDir, rec.ID)) == 0:
		return orchestrator.Settings{}, cli.Usagef("run %s is completed: there is nothing to resume; give it a new instruction (zwarm orchestrate --resume %s \"...\") or start a new run",
			record.ShortID(rec.ID), record.ShortID(rec.ID))
	case rec.Status.Live():
		return orchestrator.Settings{}, cli.Usagef("run %s is %s (process %d): stop it first (Ctrl+C in its terminal) or let it finish; zwarm runs say %s sends it a message",
			record.ShortID(rec.ID), rec.Status, rec.Owner.PID, record.ShortID(rec.ID))
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
	if rec.Isolation != "" {
		// Its workers keep working as they began: a run that lands from
		// worktrees does not switch to editing in place halfway.
		set.Isolation = rec.Isolation
	}
	if rec.Runner != "" {
		set.Runner = rec.Runner
	}
	if !fl.Changed("kill-workers-on-exit") {
		set.KillWorkersOnExit = rec.KillWorkersOnExit
	}
	// A limit the run has used up already would stop it at once, having
	// changed its record: refused, whatever stopped it before.
	if name := rec.Spent(set.Limits); name != "" {
		flag, used, limit, raised := limitFigures(rec, name, set.Limits)
		return set, cli.Usagef("run %s has used %s, and --%s is %s: resume it with a higher --%s (--%s %s)",
			record.ShortID(rec.ID), used, flag, limit, flag, flag, raised)
	}
	return set, nil
}

// limitFigures are a spent limit's flag, what the run used of it, the
// limit, and a limit twice the larger of those two, which a resumed run
// does not meet at once.
func limitFigures(rec *runs.Record, name string, lim runs.Limits) (flag, used, limit, raised string) {
	switch name {
	case "max_steps":
		return "max-steps", render.Plural(rec.Steps, "step"), strconv.Itoa(lim.MaxSteps), strconv.Itoa(max(rec.Steps, lim.MaxSteps) * 2)
	case "max_cost":
		cost, _ := rec.TotalCost()
		return "max-cost", render.Money(cost) + " with its workers", render.Money(lim.MaxCostUSD),
			strconv.FormatFloat(record.RoundCost(max(cost, lim.MaxCostUSD)*2), 'f', -1, 64)
	}
	tokens := rec.TotalTokens()
	return "max-tokens", render.Tokens(tokens) + " tokens with its workers", strconv.FormatInt(lim.MaxTokens, 10), strconv.FormatInt(max(tokens, lim.MaxTokens)*2, 10)
}

// openAIClient is the Responses API client of the config: its base URL
// (else OPENAI_BASE_URL), its key from api_key_env (OPENAI_API_KEY).
func openAIClient(oc *orchestrator.Config) (*model.OpenAI, error) {
	env := firstNonEmpty(oc.APIKeyEnv, orchestrator.DefaultAPIKeyEnv)
	key := os.Getenv(env)
	if key == "" && oc.BaseURL == "" && os.Getenv("OPENAI_BASE_URL") == "" {
		return nil, cli.Usagef("no API key: set %s (or name another variable with api_key_env in the [orchestrator] table of config.toml)", env)
	}
	return model.NewOpenAI(model.OpenAIOptions{BaseURL: oc.BaseURL, APIKey: key, MaxRetries: oc.Retries,
		MaxRetryDelay: oc.RetryMaxDelay.Duration, RequestTimeout: oc.RequestTimeout.Duration}), nil
}

// resumeCommand is the command line that continues rec.
func resumeCommand(c *cobra.Command, rec *runs.Record) string {
	cmd := "zwarm"
	if c.Flags().Changed("state-dir") {
		cmd += " --state-dir " + shellWord(c.Flag("state-dir").Value.String())
	}
	if rec.Pilot {
		cmd += " pilot --resume " + record.ShortID(rec.ID)
	} else {
		cmd += " orchestrate --resume " + record.ShortID(rec.ID)
	}
	// The limit that stopped it, raised: resumed as it was, the run would
	// stop again at once.
	if name := rec.LimitReached(); name != "" && name != "timeout" {
		flag, _, _, raised := limitFigures(rec, name, rec.Limits)
		cmd += " --" + flag + " " + raised
	}
	return cmd
}

// answerCommand is the command line that answers run id's question.
func answerCommand(c *cobra.Command, id string) string {
	cmd := "zwarm"
	if c.Flags().Changed("state-dir") {
		cmd += " --state-dir " + shellWord(c.Flag("state-dir").Value.String())
	}
	return cmd + " runs answer " + record.ShortID(id)
}

func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// runSetup is what orchestrate and pilot start a run from: the state
// dir's manager and settings (config.toml, then the flags), checked before
// the model is paid for, the model's client, the log and the notifier.
type runSetup struct {
	m        *sessions.Manager
	cfg      *config.Config
	wc       *watchers.Config
	set      orchestrator.Settings
	client   *model.OpenAI
	log      *slog.Logger
	closeLog func()
	n        *notify.Notifier
	tracer   *telemetry.Tracer // nil: telemetry off
}

// setup makes the runSetup of a run with instruction (its task, or what a
// resume adds); the caller calls closeLog when done.
func (o *orchestrateOptions) setup(c *cobra.Command, instruction string) (*runSetup, error) {
	m, cfg, err := o.f.configured()
	if err != nil {
		return nil, err
	}
	oc := orchestrator.FromConfig(cfg)
	if err := o.apply(c, oc); err != nil {
		return nil, err
	}
	wc, err := watcherConfig(m, cfg)
	if err != nil {
		return nil, err
	}
	set, err := o.settings(c, m.Store().Dir(), oc, instruction)
	if err != nil {
		return nil, err
	}
	set.Pilot = o.pilot
	if err := m.CheckRunnerName(set.Runner); err != nil {
		// Before the model is paid for: every delegate would be refused.
		return nil, cli.Usagef("[orchestrator] runner: %v", err)
	}
	client, err := openAIClient(oc)
	if err != nil {
		return nil, err
	}
	log, closeLog, err := fileLogger(m.Store().Dir())
	if err != nil {
		return nil, err
	}
	n, err := o.f.notifier(m, cfg, nil, log)
	if err != nil {
		closeLog()
		return nil, err
	}
	tracer, err := telemetry.Open(cfg, log)
	if err != nil {
		closeLog()
		return nil, config.Invalidf("%v", err)
	}
	// The spans still queued go before the log they may write to closes.
	closeAll := func() { tracer.Close(); closeLog() }
	return &runSetup{m: m, cfg: cfg, wc: wc, set: set, client: client, log: log, closeLog: closeAll, n: n, tracer: tracer}, nil
}

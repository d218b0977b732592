package orchestrator

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/config"
)

// Defaults of the [orchestrator] table.
const (
	DefaultModel         = "gpt-5.1"
	DefaultMaxSteps      = 50
	DefaultMaxWorkers    = 4
	DefaultContextWindow = 272_000
	DefaultCompactAt     = 0.8
	DefaultCompactTo     = 0.6
	DefaultRetries       = 3
	DefaultStreamRetries = 2
	DefaultAPIKeyEnv     = "OPENAI_API_KEY"
)

// Config is the [orchestrator] table of config.toml. Command-line flags
// override it.
type Config struct {
	// Model is the orchestrating model; BaseURL and APIKeyEnv say where it
	// is served and which environment variable holds the key.
	Model     string `toml:"model"`
	BaseURL   string `toml:"base_url"`
	APIKeyEnv string `toml:"api_key_env"`
	// ReasoningEffort is sent as reasoning.effort when set.
	ReasoningEffort string `toml:"reasoning_effort"`

	// Limits of a run; 0 means none (max_steps always has one).
	MaxSteps   int             `toml:"max_steps"`
	MaxCost    float64         `toml:"max_cost"`
	MaxTokens  int64           `toml:"max_tokens"`
	MaxWorkers int             `toml:"max_workers"`
	Timeout    config.Duration `toml:"timeout"`

	// AllowedDirs widen where workers and commands may run, beyond the
	// run's dir and below.
	AllowedDirs []string `toml:"allowed_dirs"`
	// Adapter and WorkerModel are the defaults of delegate ("": the
	// [adapters] defaults).
	Adapter     string `toml:"adapter"`
	WorkerModel string `toml:"worker_model"`
	// Isolation is delegate's default: "worktree" (each worker in a git
	// worktree of its own; a run outside a repository cannot delegate),
	// "none" (in place), or "" (the [worktrees] table's isolation, else a
	// worktree inside a git repository and in place outside one).
	Isolation string `toml:"isolation"`
	// Runner is where delegate's workers' supervisors run ("": the
	// [runner] table's kind, else this host), so a run on a laptop or a
	// login node can send its workers to a cluster.
	Runner string `toml:"runner"`
	// KillWorkersOnExit stops the run's workers when it ends.
	KillWorkersOnExit bool `toml:"kill_workers_on_exit"`
	// Ask offers the model ask_user when the run has no terminal to ask
	// on: the answer then comes from zwarm runs answer. With a terminal
	// the tool is offered anyway (unless --no-ask). AskTimeout, if set,
	// answers "no answer: decide yourself" when nobody answered in time.
	Ask        bool            `toml:"ask"`
	AskTimeout config.Duration `toml:"ask_timeout"`

	// ContextWindow is the model's window in tokens; ContextWindows sets
	// it per model. Compaction starts when the conversation passes
	// CompactAt of the window and brings it under CompactTo.
	ContextWindow  int64            `toml:"context_window"`
	ContextWindows map[string]int64 `toml:"context_windows"`
	CompactAt      float64          `toml:"compact_at"`
	CompactTo      float64          `toml:"compact_to"`

	// Retries bounds the API client's retries of 408, 409, 429, 5xx and
	// connection errors; RetryMaxDelay bounds one wait (a longer
	// Retry-After ends the retries); StreamRetries bounds new calls after a
	// stream broke off midway; RequestTimeout bounds one HTTP attempt.
	Retries        int             `toml:"retries"`
	RetryMaxDelay  config.Duration `toml:"retry_max_delay"`
	StreamRetries  int             `toml:"stream_retries"`
	RequestTimeout config.Duration `toml:"request_timeout"`
}

// ConfigKeys lists the table's keys, for the error about an unknown one.
const ConfigKeys = "model, base_url, api_key_env, reasoning_effort, max_steps, max_cost, max_tokens, max_workers, timeout, " +
	"allowed_dirs, adapter, worker_model, isolation, runner, kill_workers_on_exit, ask, ask_timeout, context_window, context_windows, compact_at, compact_to, " +
	"retries, retry_max_delay, stream_retries, request_timeout"

// DefaultConfig is the table's defaults.
func DefaultConfig() *Config {
	return &Config{Model: DefaultModel, APIKeyEnv: DefaultAPIKeyEnv, MaxSteps: DefaultMaxSteps, MaxWorkers: DefaultMaxWorkers, Ask: true,
		CompactAt: DefaultCompactAt, CompactTo: DefaultCompactTo, Retries: DefaultRetries, StreamRetries: DefaultStreamRetries,
		RetryMaxDelay: config.Duration{Duration: time.Minute}, RequestTimeout: config.Duration{Duration: 10 * time.Minute}}
}

// ConfigSection declares the [orchestrator] table to the session core's
// config loader.
func ConfigSection() config.Section {
	return config.Section{Name: "orchestrator", New: func() any { return DefaultConfig() }, Keys: ConfigKeys}
}

// FromConfig returns the [orchestrator] table of a loaded config, or the
// defaults if the config was loaded without the section.
func FromConfig(cfg *config.Config) *Config {
	if c, ok := cfg.Section("orchestrator").(*Config); ok && c != nil {
		return c
	}
	return DefaultConfig()
}

// Validate reports settings that cannot work, naming the key.
func (c *Config) Validate() error {
	var bad []string
	if c.MaxSteps < 1 {
		bad = append(bad, fmt.Sprintf("max_steps is %d: it must be at least 1", c.MaxSteps))
	}
	if c.MaxCost < 0 || c.MaxTokens < 0 || c.MaxWorkers < 0 {
		bad = append(bad, "max_cost, max_tokens and max_workers cannot be negative (0 means no limit)")
	}
	if c.CompactAt <= 0 || c.CompactAt > 1 || c.CompactTo <= 0 || c.CompactTo >= c.CompactAt {
		bad = append(bad, fmt.Sprintf("compact_at (%g) and compact_to (%g) must satisfy 0 < compact_to < compact_at <= 1", c.CompactAt, c.CompactTo))
	}
	if c.AskTimeout.Duration < 0 {
		bad = append(bad, "ask_timeout cannot be negative (0 means none)")
	}
	if c.ContextWindow < 0 {
		bad = append(bad, "context_window cannot be negative")
	}
	for m, w := range c.ContextWindows {
		if w <= 0 {
			bad = append(bad, fmt.Sprintf("context_windows.%q is %d: it must be a positive number of tokens", m, w))
		}
	}
	if c.Retries < 0 || c.Retries > 20 || c.StreamRetries < 0 || c.StreamRetries > 20 {
		bad = append(bad, "retries and stream_retries must be between 0 and 20")
	}
	for _, d := range c.AllowedDirs {
		if !filepath.IsAbs(d) {
			bad = append(bad, fmt.Sprintf("allowed_dirs entry %q is not an absolute path", d))
		}
	}
	switch c.Isolation {
	case "", config.IsolationWorktree, config.IsolationNone:
	default:
		bad = append(bad, fmt.Sprintf("isolation %q is not %q or %q (or unset: the [worktrees] table decides)", c.Isolation, config.IsolationWorktree, config.IsolationNone))
	}
	switch c.ReasoningEffort {
	case "", "minimal", "low", "medium", "high":
	default:
		bad = append(bad, fmt.Sprintf("reasoning_effort %q is not one of minimal, low, medium, high", c.ReasoningEffort))
	}
	if len(bad) > 0 {
		return fmt.Errorf("[orchestrator]: %s", strings.Join(bad, "; "))
	}
	return nil
}

// Window is the context window of a model: context_windows, else
// context_window, else the default.
func (c *Config) Window(model string) int64 {
	if w, ok := c.ContextWindows[model]; ok {
		return w
	}
	if c.ContextWindow > 0 {
		return c.ContextWindow
	}
	return DefaultContextWindow
}

// Limits returns the table's limits.
func (c *Config) Limits() runs.Limits {
	return runs.Limits{MaxSteps: c.MaxSteps, MaxCostUSD: c.MaxCost, MaxTokens: c.MaxTokens, MaxWorkers: c.MaxWorkers, Timeout: c.Timeout}
}

package watchers

import (
	"fmt"
	"github.com/zwarm/zwarm/sessions/config"
	"regexp"
	"strings"
	"time"
)

// Config is the [watchers] table of config.toml: a timeout for each
// watcher's check, and one [watchers.NAME] table per watcher, each with
// enabled, priority (higher wins a tie of severity) and its own knobs.
type Config struct {
	// Timeout bounds one watcher's check before a step; the llm watcher
	// has its own.
	Timeout config.Duration `toml:"timeout"`

	Progress           ProgressConfig   `toml:"progress"`
	Budget             BudgetConfig     `toml:"budget"`
	Scope              ScopeConfig      `toml:"scope"`
	Pattern            PatternConfig    `toml:"pattern"`
	Delegation         DelegationConfig `toml:"delegation"`
	DelegationReminder ReminderConfig   `toml:"delegation_reminder"`
	Quality            QualityConfig    `toml:"quality"`
	LLM                LLMConfig        `toml:"llm"`

	Stall     StallConfig     `toml:"stall"`
	Failure   FailureConfig   `toml:"failure"`
	Hollow    HollowConfig    `toml:"hollow"`
	CostGuard CostGuardConfig `toml:"cost_guard"`
	Overlap   OverlapConfig   `toml:"overlap"`
}

// Common are the keys of every watcher's table.
type Common struct {
	Enabled  bool `toml:"enabled"`
	Priority int  `toml:"priority"`
}

// ProgressConfig: the run goes round in circles.
type ProgressConfig struct {
	Common
	// Repeats of the same call with the same arguments in a row (wait and
	// sleep aside), or of the same tool output, that nudge.
	Repeats int `toml:"repeats"`
	// AbortRepeats of the same call in a row abort the run (0: never).
	AbortRepeats int `toml:"abort_repeats"`
	// IdleSteps: steps with workers running and none finished that nudge.
	IdleSteps int `toml:"idle_steps"`
	// EmptyWaits: waits in a row that returned nothing finished.
	EmptyWaits int `toml:"empty_waits"`
}

// BudgetConfig: steps, tokens and cost against the run's limits.
type BudgetConfig struct {
	Common
	// WarnAt is the share of a limit past which the run is told what is
	// left; past the limit itself the run is aborted.
	WarnAt float64 `toml:"warn_at"`
	// MaxWorkers running at once before a nudge (0: the run's max_workers).
	MaxWorkers int `toml:"max_workers"`
}

// ScopeConfig: words that mean the run is straying.
type ScopeConfig struct {
	Common
	Keywords []string `toml:"keywords"`
}

// PatternConfig: regexes over recent messages and tool output.
type PatternConfig struct {
	Common
	Rules []PatternRule `toml:"rules"`
}

// PatternRule is one [[watchers.pattern.rules]] entry.
type PatternRule struct {
	Regex   Regexp `toml:"regex"`
	Action  Action `toml:"action"`
	Message string `toml:"message"`
	// In is where to look: "messages", "outputs" or "all" (default).
	In string `toml:"in"`
}

// DelegationConfig: the orchestrator writing code itself.
type DelegationConfig struct {
	Common
	// Extensions are what counts as a source file.
	Extensions []string `toml:"extensions"`
}

// ReminderConfig: many steps without delegating.
type ReminderConfig struct {
	Common
	Steps int `toml:"steps"`
}

// QualityConfig: what the run's workers changed.
type QualityConfig struct {
	Common
	// MaxFiles changed by the run's workers before a nudge to split.
	MaxFiles int `toml:"max_files"`
	// RequireTests nudges when a finished worker changed code and no test.
	RequireTests bool `toml:"require_tests"`
	// Extensions are code; TestPatterns are globs that, matching a file's
	// base name or one of its directories, make it a test.
	Extensions   []string `toml:"extensions"`
	TestPatterns []string `toml:"test_patterns"`
}

// LLMConfig: a model reviews the run's trajectory every few steps.
type LLMConfig struct {
	Common
	Every int `toml:"every"`
	// Model reviews ("": the run's model), through the run's client.
	Model   string          `toml:"model"`
	Timeout config.Duration `toml:"timeout"`
	// Steps is how many recent steps the review reads.
	Steps     int    `toml:"steps"`
	OnConcern Action `toml:"on_concern"`
	OnProblem Action `toml:"on_problem"`
}

// StallConfig: a running worker that went silent.
type StallConfig struct {
	Common
	// After is how long a running worker may print nothing.
	After config.Duration `toml:"after"`
	// FirstEvent is how long a turn may take to print its first event.
	FirstEvent config.Duration `toml:"first_event"`
}

// FailureConfig: a worker that failed or was killed.
type FailureConfig struct {
	Common
	// Killed reports killed workers too.
	Killed bool `toml:"killed"`
}

// HollowConfig: a worker that completed having said and changed nothing.
type HollowConfig struct{ Common }

// CostGuardConfig: caps of one worker; 0 is no cap.
type CostGuardConfig struct {
	Common
	MaxTokens int64   `toml:"max_tokens"`
	MaxCost   float64 `toml:"max_cost"`
}

// OverlapConfig: two live workers of one repository changing the same
// file, which the second to land may conflict on.
type OverlapConfig struct{ Common }

// Regexp is a regular expression written as a TOML string; a bad one is
// an error when config.toml is read.
type Regexp struct{ *regexp.Regexp }

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *Regexp) UnmarshalText(b []byte) error {
	re, err := regexp.Compile(string(b))
	if err != nil {
		return fmt.Errorf("regex %q: %w", b, err)
	}
	r.Regexp = re
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (r Regexp) MarshalText() ([]byte, error) {
	if r.Regexp == nil {
		return nil, nil
	}
	return []byte(r.String()), nil
}

// Defaults.
const (
	DefaultTimeout      = 5 * time.Second
	DefaultRepeats      = 5
	DefaultAbortRepeats = 10
	DefaultIdleSteps    = 5
	DefaultEmptyWaits   = 3
	DefaultWarnAt       = 0.8
	DefaultReminder     = 10
	DefaultMaxFiles     = 10
	DefaultEvery        = 5
	DefaultLLMTimeout   = time.Minute
	DefaultLLMSteps     = 10
	DefaultStallAfter   = 10 * time.Minute
	DefaultFirstEvent   = 60 * time.Second
)

// SourceExtensions are what the delegation and quality watchers take for
// code.
var SourceExtensions = []string{".go", ".py", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".rs", ".java", ".kt", ".scala",
	".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".rb", ".php", ".swift", ".m", ".sh", ".sql", ".vue", ".svelte", ".ex", ".exs", ".lua", ".zig"}

// TestPatterns mark a path as a test: globs (path.Match) matched against
// its base name and each of its directories.
var TestPatterns = []string{"*_test.*", "test_*", "*.test.*", "*.spec.*", "*Test.*", "*Tests.*", "test", "tests", "spec", "__tests__"}

func on(priority int) Common { return Common{Enabled: true, Priority: priority} }

// DefaultConfig is every watcher at its defaults: all enabled but llm
// (it calls a model, which costs money); scope and pattern do nothing
// until given keywords or rules, cost_guard until given a cap.
func DefaultConfig() *Config {
	return &Config{
		Timeout:  config.Duration{Duration: DefaultTimeout},
		Progress: ProgressConfig{Common: on(80), Repeats: DefaultRepeats, AbortRepeats: DefaultAbortRepeats, IdleSteps: DefaultIdleSteps, EmptyWaits: DefaultEmptyWaits},
		Budget:   BudgetConfig{Common: on(90), WarnAt: DefaultWarnAt},
		Scope:    ScopeConfig{Common: on(20), Keywords: []string{}},
		Pattern:  PatternConfig{Common: on(70)},
		Delegation: DelegationConfig{Common: on(30),
			Extensions: append([]string(nil), SourceExtensions...)},
		DelegationReminder: ReminderConfig{Common: on(10), Steps: DefaultReminder},
		Quality: QualityConfig{Common: on(35), MaxFiles: DefaultMaxFiles, RequireTests: true,
			Extensions: append([]string(nil), SourceExtensions...), TestPatterns: append([]string(nil), TestPatterns...)},
		LLM: LLMConfig{Common: Common{Priority: 60}, Every: DefaultEvery, Timeout: config.Duration{Duration: DefaultLLMTimeout},
			Steps: DefaultLLMSteps, OnConcern: Nudge, OnProblem: Nudge},
		Stall:     StallConfig{Common: on(45), After: config.Duration{Duration: DefaultStallAfter}, FirstEvent: config.Duration{Duration: DefaultFirstEvent}},
		Failure:   FailureConfig{Common: on(50), Killed: true},
		Hollow:    HollowConfig{Common: on(40)},
		CostGuard: CostGuardConfig{Common: on(55)},
		Overlap:   OverlapConfig{Common: on(42)},
	}
}

// ConfigKeys lists the table's keys, for the error about an unknown one.
const ConfigKeys = "timeout; [watchers.NAME] enabled, priority and: progress repeats/abort_repeats/idle_steps/empty_waits, " +
	"budget warn_at/max_workers, scope keywords, pattern [[rules]] regex/action/message/in, " +
	"delegation extensions, delegation_reminder steps, quality max_files/require_tests/extensions/test_patterns, " +
	"llm every/model/timeout/steps/on_concern/on_problem, stall after/first_event, failure killed, hollow, cost_guard max_tokens/max_cost, overlap"

// ConfigSection declares the [watchers] table to the session core's
// config loader.
func ConfigSection() config.Section {
	return config.Section{Name: "watchers", New: func() any { return DefaultConfig() }, Keys: ConfigKeys}
}

// FromConfig returns the [watchers] table of a loaded config, or the
// defaults if the config was loaded without the section.
func FromConfig(cfg *config.Config) *Config {
	if cfg != nil {
		if c, ok := cfg.Section("watchers").(*Config); ok && c != nil {
			return c
		}
	}
	return DefaultConfig()
}

// Validate reports settings that cannot work, naming the key.
func (c *Config) Validate() error {
	var bad []string
	atLeast := func(key string, v, min int) {
		if v < min {
			bad = append(bad, fmt.Sprintf("%s is %d: it must be at least %d", key, v, min))
		}
	}
	atLeast("progress.repeats", c.Progress.Repeats, 2)
	atLeast("progress.abort_repeats", c.Progress.AbortRepeats, 0)
	if c.Progress.AbortRepeats > 0 && c.Progress.AbortRepeats <= c.Progress.Repeats {
		bad = append(bad, fmt.Sprintf("progress.abort_repeats (%d) must be above repeats (%d), or 0 for never", c.Progress.AbortRepeats, c.Progress.Repeats))
	}
	atLeast("progress.idle_steps", c.Progress.IdleSteps, 1)
	atLeast("progress.empty_waits", c.Progress.EmptyWaits, 1)
	if c.Budget.WarnAt <= 0 || c.Budget.WarnAt > 1 {
		bad = append(bad, fmt.Sprintf("budget.warn_at is %g: it must be a share above 0 and at most 1", c.Budget.WarnAt))
	}
	atLeast("budget.max_workers", c.Budget.MaxWorkers, 0)
	for i, r := range c.Pattern.Rules {
		switch {
		case r.Regex.Regexp == nil:
			bad = append(bad, fmt.Sprintf("pattern.rules[%d] has no regex", i))
		case r.Action == "" || r.Action == Continue:
			bad = append(bad, fmt.Sprintf("pattern.rules[%d] (%s) needs an action: nudge, pause or abort", i, r.Regex))
		}
		switch r.In {
		case "", "all", "messages", "outputs":
		default:
			bad = append(bad, fmt.Sprintf("pattern.rules[%d] in = %q: want messages, outputs or all", i, r.In))
		}
	}
	atLeast("delegation_reminder.steps", c.DelegationReminder.Steps, 1)
	atLeast("quality.max_files", c.Quality.MaxFiles, 1)
	atLeast("llm.every", c.LLM.Every, 1)
	atLeast("llm.steps", c.LLM.Steps, 1)
	if c.Stall.After.Duration <= 0 || c.Stall.FirstEvent.Duration <= 0 {
		bad = append(bad, "stall.after and stall.first_event must be positive durations, e.g. \"10m\" and \"60s\"")
	}
	if c.CostGuard.MaxTokens < 0 || c.CostGuard.MaxCost < 0 {
		bad = append(bad, "cost_guard.max_tokens and max_cost cannot be negative (0 means no cap)")
	}
	if c.Timeout.Duration <= 0 || c.LLM.Timeout.Duration <= 0 {
		bad = append(bad, "timeout and llm.timeout must be positive durations")
	}
	if len(bad) > 0 {
		return fmt.Errorf("[watchers]: %s", strings.Join(bad, "; "))
	}
	return nil
}

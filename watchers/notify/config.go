package notify

import (
	"fmt"
	"github.com/zwarm/zwarm/sessions/config"
	"slices"
	"strings"
	"time"
)

// The events, as [notify] on names them and ZWARM_EVENT says them.
const (
	WorkerCompleted = "worker.completed" // a worker's turn completed
	WorkerFailed    = "worker.failed"    // a worker failed or was killed
	WorkerStalled   = "worker.stalled"   // a running worker printed nothing for [watchers.stall] after
	RunFinished     = "run.finished"     // an orchestrator run stopped, however
	RunAsks         = "run.asks"         // a run waits for a person's answer
)

// Events are every event, in the order the docs list them.
var Events = []string{WorkerCompleted, WorkerFailed, WorkerStalled, RunFinished, RunAsks}

// DefaultTimeout is how long a command may run before it is stopped.
const DefaultTimeout = 10 * time.Second

// Config is the [notify] table.
type Config struct {
	// Command is run by sh -c for each event; none: only the terminal bell.
	Command string `toml:"command"`
	// On is the events that run it; none given: every event.
	On []string `toml:"on"`
	// Terminal rings the dashboard's terminal (and watch --notify's) for
	// the same events; default true.
	Terminal *bool `toml:"terminal"`
	// Timeout stops a command that runs longer ("10s" by default).
	Timeout string `toml:"timeout"`
}

// Keys lists the table's keys for the error about an unknown one.
const Keys = "command/on/terminal/timeout"

// ConfigSection declares the [notify] table to the session core's config.
func ConfigSection() config.Section {
	return config.Section{Name: "notify", New: func() any { return &Config{} }, Keys: Keys}
}

// FromConfig is the [notify] table of cfg, or the defaults.
func FromConfig(cfg *config.Config) *Config {
	if cfg != nil {
		if c, ok := cfg.Section("notify").(*Config); ok && c != nil {
			return c
		}
	}
	return &Config{}
}

// Validate reports settings that cannot work, naming the key.
func (c *Config) Validate() error {
	for _, e := range c.On {
		if !slices.Contains(Events, e) {
			return fmt.Errorf("[notify] on: unknown event %q (known: %s)", e, strings.Join(Events, ", "))
		}
	}
	if c.Timeout != "" {
		if d, err := time.ParseDuration(c.Timeout); err != nil || d <= 0 {
			return fmt.Errorf("[notify] timeout = %q: want a duration such as \"10s\"", c.Timeout)
		}
	}
	return nil
}

// Wants reports whether event is one [notify] on names.
func (c *Config) Wants(event string) bool {
	return len(c.On) == 0 || slices.Contains(c.On, event)
}

// Rings reports whether a front end on a terminal rings it.
func (c *Config) Rings() bool { return c.Terminal == nil || *c.Terminal }

// timeout is Timeout as a duration.
func (c *Config) timeout() time.Duration {
	if d, err := time.ParseDuration(c.Timeout); err == nil && d > 0 {
		return d
	}
	return DefaultTimeout
}

package mcpserver

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/zwarm/zwarm/orchestrator/tools"
	"github.com/zwarm/zwarm/sessions/config"
)

// Defaults of the [mcp] table.
const (
	DefaultMaxWorkers = 4
	// DefaultWaitCap keeps a wait under the minute after which Claude Code
	// and Codex give up on a tool call.
	DefaultWaitCap = 50 * time.Second
)

// Config is the [mcp] table of config.toml.
type Config struct {
	// MaxWorkers bounds the mcp workers running at once (0: no bound).
	MaxWorkers int `toml:"max_workers"`
	// AllowedDirs are absolute directories workers may run in (and below),
	// besides the directory the server was started in.
	AllowedDirs []string `toml:"allowed_dirs"`
	// Adapter and Model are spawn's defaults ("": config.toml's
	// default_adapter and the [adapters.NAME] model). Model applies only
	// to the default adapter.
	Adapter string `toml:"adapter"`
	Model   string `toml:"model"`
	// WaitCap is the longest a wait call blocks.
	WaitCap config.Duration `toml:"wait_cap"`
	// MinWait is the shortest (0: tools.MinWaitSeconds). It is no
	// setting: only tests shorten it, to see a wait time out sooner.
	MinWait time.Duration `toml:"-"`
}

// ConfigKeys lists the table's keys, for the error about an unknown one.
const ConfigKeys = "max_workers, allowed_dirs, adapter, model, wait_cap"

// DefaultConfig is the table's defaults.
func DefaultConfig() *Config {
	return &Config{MaxWorkers: DefaultMaxWorkers, WaitCap: config.Duration{Duration: DefaultWaitCap}}
}

// ConfigSection declares the [mcp] table to the session core's config
// loader.
func ConfigSection() config.Section {
	return config.Section{Name: "mcp", New: func() any { return DefaultConfig() }, Keys: ConfigKeys}
}

// FromConfig returns the [mcp] table of a loaded config, or the defaults
// if the config was loaded without the section.
func FromConfig(cfg *config.Config) *Config {
	if c, ok := cfg.Section("mcp").(*Config); ok && c != nil {
		return c
	}
	return DefaultConfig()
}

// Validate reports settings that cannot work, naming the key.
func (c *Config) Validate() error {
	var bad []string
	if c.MaxWorkers < 0 {
		bad = append(bad, fmt.Sprintf("max_workers is %d: it cannot be negative (0 means no limit)", c.MaxWorkers))
	}
	if min, max := c.minWait(), tools.MaxWaitSeconds*time.Second; c.WaitCap.Duration < min || c.WaitCap.Duration > max {
		bad = append(bad, fmt.Sprintf("wait_cap is %s: it must be from %s (the shortest wait) to %s", c.WaitCap.Duration, min, max))
	}
	for _, d := range c.AllowedDirs {
		if !filepath.IsAbs(d) {
			bad = append(bad, fmt.Sprintf("allowed_dirs entry %q is not an absolute path", d))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("[mcp]: %s", strings.Join(bad, "; "))
	}
	return nil
}

// minWait is the shortest wait.
func (c *Config) minWait() time.Duration {
	if c.MinWait > 0 {
		return c.MinWait
	}
	return tools.MinWaitSeconds * time.Second
}

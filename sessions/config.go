package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// ConfigFile is the name of zwarm's settings file in the state directory.
const ConfigFile = "config.toml"

// DefaultKillGrace is how long a killed agent gets between SIGTERM and SIGKILL.
const DefaultKillGrace = 5 * time.Second

// Config is .zwarm/config.toml. Every key is optional; unknown keys are an
// error so that a typo never silently does nothing.
type Config struct {
	DefaultAdapter string                   `toml:"default_adapter"`
	KillGrace      Duration                 `toml:"kill_grace"`
	Adapters       map[string]AdapterConfig `toml:"adapters"`
	Prices         map[string]Price         `toml:"prices"`
}

// AdapterConfig is one [adapters.NAME] table.
type AdapterConfig struct {
	Model   string `toml:"model"`
	Binary  string `toml:"binary"`
	Sandbox string `toml:"sandbox"`
}

// Duration is a time.Duration written as "5s" or "1m30s" in TOML.
type Duration struct{ time.Duration }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("want a duration such as \"5s\": %w", err)
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative", b)
	}
	d.Duration = v
	return nil
}

// LoadConfig reads config.toml from the state directory. A missing file is
// an empty config.
func LoadConfig(stateDir string) (Config, error) {
	path := filepath.Join(stateDir, ConfigFile)
	var c Config
	md, err := toml.DecodeFile(path, &c)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("read %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return Config{}, fmt.Errorf("%s: unknown key %s (known: default_adapter, kill_grace, [adapters.NAME] model/binary/sandbox, [prices.\"MODEL\"] input/cached_input/output)",
			path, strings.Join(keys, ", "))
	}
	return c, nil
}

// Adapter returns the settings of one adapter.
func (c Config) Adapter(name string) AdapterConfig { return c.Adapters[name] }

// Grace is the kill grace period, defaulted.
func (c Config) Grace() time.Duration {
	if c.KillGrace.Duration > 0 {
		return c.KillGrace.Duration
	}
	return DefaultKillGrace
}

// PriceTable is the default prices with the configured ones on top.
func (c Config) PriceTable() Prices { return DefaultPrices().Merge(c.Prices) }

// CheckAdapters reports configured adapter names that do not exist.
func (c Config) CheckAdapters(stateDir string, known []string) error {
	ok := func(n string) bool {
		for _, k := range known {
			if k == n {
				return true
			}
		}
		return false
	}
	path := filepath.Join(stateDir, ConfigFile)
	if c.DefaultAdapter != "" && !ok(c.DefaultAdapter) {
		return fmt.Errorf("%s: default_adapter %q is not an adapter (known: %s)", path, c.DefaultAdapter, strings.Join(known, ", "))
	}
	for n := range c.Adapters {
		if !ok(n) {
			return fmt.Errorf("%s: unknown adapter table [adapters.%s] (known: %s)", path, n, strings.Join(known, ", "))
		}
	}
	return nil
}

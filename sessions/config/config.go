package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/store"
)

// File is the name of zwarm's settings file in the state directory.
const File = store.ConfigFile

// DefaultKillGrace is how long a killed agent gets between SIGTERM and SIGKILL.
const DefaultKillGrace = 5 * time.Second

// BuiltinAdapter is the adapter of a spawn that names none, when
// default_adapter does not name one either.
const BuiltinAdapter = "codex"

// SpawnAdapter is the adapter of a spawn that names none.
func (c *Config) SpawnAdapter() string {
	if a := strings.TrimSpace(c.DefaultAdapter); a != "" {
		return a
	}
	return BuiltinAdapter
}

// Config is .zwarm/config.toml. Every key is optional; unknown keys are an
// error so that a typo never silently does nothing. Tables other packages
// own ([orchestrator], [watchers], [mcp]) are declared as ConfigSections and
// decoded, just as strictly, into their own types.
type Config struct {
	DefaultAdapter string   `toml:"default_adapter"`
	KillGrace      Duration `toml:"kill_grace"`
	// LockLimit is lock_timeout: how long a command waits for a lock.
	LockLimit Duration                 `toml:"lock_timeout"`
	Adapters  map[string]AdapterConfig `toml:"adapters"`
	Prices    map[string]record.Price  `toml:"prices"`
	Worktrees WorktreesConfig          `toml:"worktrees"`
	// State is [state]: how the state dir itself is kept (its locks).
	State StateConfig `toml:"state"`
	// Roles are the [roles.NAME] tables: named worker settings (roles.go).
	Roles map[string]RoleConfig `toml:"roles"`
	// Runner is [runner]: where new sessions' supervisors run.
	Runner RunnerConfig `toml:"-"`
	// Tel is [telemetry] as written; Telemetry is what is in force.
	Tel TelemetryConfig `toml:"telemetry"`

	sections map[string]any
}

// Section is a top-level table of config.toml that another package
// owns. New returns a pointer to the value the table decodes into, with
// that package's defaults filled in; a key the value has no field for is an
// error naming the key and the file, as for zwarm's own keys.
type Section struct {
	Name string
	New  func() any
	// Keys describes the table's keys for the error about an unknown one.
	Keys string
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

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

const coreKeys = "default_adapter, kill_grace, lock_timeout, [adapters.NAME] model/binary/sandbox, [prices.\"MODEL\"] input/cached_input/output, [prices.RUNNER] core_hour, [worktrees] " + worktreesKeys + ", [runner] kind, " + stateKeys + ", " + rolesKeys + ", " + telemetryKeys

// Load reads the person's own config.toml (UserConfigPath: what
// goes with the person rather than the project, such as [notify] or a
// default model), then the state directory's on top of it, with the tables of the given
// sections: a key the project's file sets wins over the person's (a
// table's keys one by one; a named table such as [adapters.codex] or
// [roles.NAME] as a whole). Missing files are empty configs (sections at
// their defaults). A state dir this user must not trust is an
// *UntrustedError, before anything is read (CheckTrusted).
func Load(stateDir string, sections ...Section) (*Config, error) {
	if err := CheckTrusted(stateDir); err != nil {
		return nil, err
	}
	c := &Config{sections: map[string]any{}}
	for _, sec := range sections {
		c.sections[sec.Name] = sec.New()
	}
	var last string
	if path, err := UserPath(); err == nil {
		found, err := c.decodeFile(path, sections, true)
		if err != nil {
			return nil, err
		}
		if found {
			last = path
		}
	}
	path := filepath.Join(stateDir, File)
	found, err := c.decodeFile(path, sections, false)
	if err != nil {
		return nil, err
	}
	if found || last == "" {
		last = path
	}
	if err := c.Worktrees.check(); err != nil {
		return nil, &Error{Path: last, Err: fmt.Errorf("[worktrees] %w", err)}
	}
	if err := c.State.check(); err != nil {
		return nil, &Error{Path: last, Err: fmt.Errorf("[state] %w", err)}
	}
	if err := c.checkRoles(); err != nil {
		return nil, &Error{Path: last, Err: err}
	}
	return c, nil
}

// decodeFile decodes the config file at path into c, over what c has;
// found is false when there is no such file. The person's own file (user)
// must be theirs and writable by them alone, as for its [trust] list
// (LoadUserConfig), which it alone may have.
func (c *Config) decodeFile(path string, sections []Section, user bool) (found bool, err error) {
	if user {
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, &Error{Path: path, Err: err}
		}
		if why := untrustedBy(fi, true); why != "" {
			return false, &Error{Path: path, Err: fmt.Errorf("%s, so it is not used: it must be yours, and writable by you alone", why)}
		}
	}
	var raw map[string]toml.Primitive
	md, err := toml.DecodeFile(path, &raw)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, &Error{Path: path, Err: err}
	}
	if user {
		delete(raw, "trust") // LoadUserConfig's
	}
	unknown, err := c.decodeKeys(md, raw)
	if err != nil {
		return false, &Error{Path: path, Err: err}
	}
	known := map[string]string{}
	for _, sec := range sections {
		known[sec.Name] = sec.Keys
	}
	// Keys decoded into nothing are unknown: a top-level one never reaches
	// Undecoded (it went into the raw map), the keys of a table do.
	keys := unknown
	var inTable string
	for _, k := range md.Undecoded() {
		if len(k) > 1 && !slices.Contains(unknown, k[0]) && !(user && k[0] == "trust") {
			keys = append(keys, k.String())
			inTable = k[0]
		}
	}
	if len(keys) > 0 {
		sort.Strings(keys)
		return false, &Error{Path: path, Err: fmt.Errorf("unknown key %s (known: %s)", strings.Join(keys, ", "), knownKeys(inTable, known))}
	}
	return true, nil
}

// decodeKeys decodes each top-level key of a file into its place: a core
// setting, a table, or a section declared by an adapter or a runner. It
// returns the keys that have none.
func (c *Config) decodeKeys(md toml.MetaData, raw map[string]toml.Primitive) (unknown []string, err error) {
	for key, prim := range raw {
		var into any
		switch key {
		case "default_adapter":
			into = &c.DefaultAdapter
		case "kill_grace":
			into = &c.KillGrace
		case "lock_timeout":
			into = &c.LockLimit
		case "adapters":
			into = &c.Adapters
		case "prices":
			into = &c.Prices
		case "worktrees":
			into = &c.Worktrees
		case "state":
			into = &c.State
		case "roles":
			into = &c.Roles
		case "telemetry":
			into = &c.Tel
		case "runner":
			if err := c.decodeRunner(md, prim); err != nil {
				return nil, err
			}
			continue
		default:
			into = c.sections[key]
		}
		if into == nil {
			unknown = append(unknown, key)
			continue
		}
		if err := md.PrimitiveDecode(prim, into); err != nil {
			if kerr := kindError(err); kerr != err {
				return nil, kerr // it names the key
			}
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	return unknown, nil
}

// knownKeys says what may be written where an unknown key was: the keys
// of the table it is in, or the top-level keys and tables.
func knownKeys(inTable string, known map[string]string) string {
	switch {
	case inTable == "worktrees":
		return "[worktrees] " + worktreesKeys + ", [runner] kind"
	case inTable == "state":
		return stateKeys
	case inTable == "runner":
		return runnerKeys(known)
	case inTable == "roles":
		return rolesKeys
	case inTable == "telemetry":
		return telemetryKeys
	case known[inTable] != "":
		return "[" + inTable + "] " + known[inTable]
	case len(known) > 0:
		names := make([]string, 0, len(known))
		for n := range known {
			if strings.HasPrefix(n, "runner.") {
				continue
			}
			names = append(names, "["+n+"]")
		}
		sort.Strings(names)
		return coreKeys + ", " + strings.Join(names, ", ")
	}
	return coreKeys
}

// Error is a config file that cannot be used as written.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string {
	msg := e.Err.Error()
	if strings.HasPrefix(msg, e.Path) {
		return msg
	}
	return e.Path + ": " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// Section is the decoded value of a section's table: what its New returned,
// filled from the file.
func (c *Config) Section(name string) any { return c.sections[name] }

// Adapter returns the settings of one adapter.
func (c *Config) Adapter(name string) AdapterConfig { return c.Adapters[name] }

// Grace is the kill grace period, defaulted.
func (c *Config) Grace() time.Duration {
	if c != nil && c.KillGrace.Duration > 0 {
		return c.KillGrace.Duration
	}
	return DefaultKillGrace
}

// PriceTable is the default prices with the configured ones on top.
func (c *Config) PriceTable() record.Prices { return record.DefaultPrices().Merge(c.Prices) }

// CheckAdapters reports configured adapter names that do not exist.
func (c *Config) CheckAdapters(stateDir string, known []string) error {
	ok := func(n string) bool {
		for _, k := range known {
			if k == n {
				return true
			}
		}
		return false
	}
	path := filepath.Join(stateDir, File)
	if c.DefaultAdapter != "" && !ok(c.DefaultAdapter) {
		return &Error{Path: path, Err: fmt.Errorf("default_adapter %q is not an adapter (known: %s)", c.DefaultAdapter, strings.Join(known, ", "))}
	}
	for n := range c.Adapters {
		if !ok(n) {
			return &Error{Path: path, Err: fmt.Errorf("unknown adapter table [adapters.%s] (known: %s)", n, strings.Join(known, ", "))}
		}
	}
	return c.checkRoleAdapters(stateDir, ok, known)
}

package config

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// RoleConfig is one [roles.NAME] table: a named set of worker settings, so
// that a person or a model asks for "a reviewer" instead of repeating them.
// What a spawn names itself wins over its role's.
type RoleConfig struct {
	Adapter         string `toml:"adapter"`
	Model           string `toml:"model"`
	ReasoningEffort string `toml:"reasoning_effort"`
	Sandbox         string `toml:"sandbox"`
	// Instructions are given to the agent as instructions of its own, on
	// every turn (codex: developer_instructions; claude:
	// --append-system-prompt), beside the task rather than in it.
	Instructions string  `toml:"instructions"`
	MaxCostUSD   float64 `toml:"max_cost_usd"`
	// Runner is where the role's workers' supervisors run ("local", or a
	// runner such as "slurm"): a role that needs a cluster's node says so.
	Runner string `toml:"runner"`
	// Slurm is what the role's workers' jobs ask of a Slurm cluster, over
	// [runner.slurm]'s: [roles.NAME.slurm].
	Slurm Resources `toml:"slurm"`
}

// Resources are what a worker's jobs ask of its cluster, over the
// runner's own settings: "" (0) keeps the runner's.
type Resources struct {
	Partition  string `toml:"partition"`
	Time       string `toml:"time"`
	CPUs       int    `toml:"cpus"`
	Mem        string `toml:"mem"`
	Gres       string `toml:"gres"`
	Account    string `toml:"account"`
	QOS        string `toml:"qos"`
	Constraint string `toml:"constraint"`
}

// ResourceKeys are the keys of Resources, as a spawn's --slurm KEY=VALUE
// and a delegate's slurm object name them.
var ResourceKeys = []string{"partition", "time", "cpus", "mem", "gres", "account", "qos", "constraint"}

// Map is r by key, its set fields only.
func (r Resources) Map() map[string]string {
	m := map[string]string{}
	for k, v := range map[string]string{"partition": r.Partition, "time": r.Time, "mem": r.Mem, "gres": r.Gres,
		"account": r.Account, "qos": r.QOS, "constraint": r.Constraint} {
		if v != "" {
			m[k] = v
		}
	}
	if r.CPUs != 0 {
		m["cpus"] = fmt.Sprint(r.CPUs)
	}
	return m
}

// JobResources is what a worker's jobs under runner ask of its engine:
// asked (a spawn's, a delegation's) over its role's [roles.NAME.slurm]
// (role "": none). On this machine (runner "local") there is no engine
// to ask: resources asked are refused, a role's are left unused.
func (c *Config) JobResources(role, runner string, asked map[string]string) (map[string]string, error) {
	if runner == "local" || runner == "" {
		if len(asked) > 0 {
			return nil, Invalidf("resources (%s) are what a cluster's job asks, and this worker runs on this machine: run it under a runner (--runner slurm, or [runner] kind)", strings.Join(slices.Sorted(maps.Keys(asked)), ", "))
		}
		return nil, nil
	}
	out := map[string]string{}
	if r, ok := c.Roles[role]; ok && runner == "slurm" {
		out = r.Slurm.Map()
	}
	maps.Copy(out, asked)
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

const rolesKeys = "[roles.NAME] adapter/model/reasoning_effort/sandbox/instructions/max_cost_usd/runner, [roles.NAME.slurm] partition/time/cpus/mem/gres/account/qos/constraint"

// RoleNames lists the configured roles, sorted.
func (c *Config) RoleNames() []string {
	names := make([]string, 0, len(c.Roles))
	for n := range c.Roles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Role is the role called name, or an error (ErrInvalidRequest) that
// lists the configured ones.
func (c *Config) Role(name string) (RoleConfig, error) {
	if r, ok := c.Roles[name]; ok {
		return r, nil
	}
	if len(c.Roles) == 0 {
		return RoleConfig{}, Invalidf("no role %q: no roles are configured; add a [roles.%s] table to config.toml (adapter, model, reasoning_effort, sandbox, instructions, max_cost_usd)", name, name)
	}
	return RoleConfig{}, Invalidf("no role %q: the roles in config.toml are %s", name, strings.Join(c.RoleNames(), ", "))
}

// checkRoles refuses a role table that can never work, whatever spawns it.
// The adapter's own values (its efforts, its sandboxes) are checked by the
// adapter when a spawn uses the role.
func (c *Config) checkRoles() error {
	for _, name := range c.RoleNames() {
		r := c.Roles[name]
		switch {
		case !validRoleName(name):
			return fmt.Errorf("[roles.%s]: a role's name is letters, digits, '-' and '_'", name)
		case r.MaxCostUSD < 0 || math.IsNaN(r.MaxCostUSD) || math.IsInf(r.MaxCostUSD, 0):
			return fmt.Errorf("[roles.%s] max_cost_usd = %v: want a number of dollars above 0 (leave it out for no limit)", name, r.MaxCostUSD)
		}
	}
	return nil
}

func validRoleName(n string) bool {
	if n == "" {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// checkRoleAdapters refuses a role naming an adapter that does not exist.
func (c *Config) checkRoleAdapters(stateDir string, ok func(string) bool, known []string) error {
	for _, name := range c.RoleNames() {
		if a := c.Roles[name].Adapter; a != "" && !ok(a) {
			return &Error{Path: filepath.Join(stateDir, File),
				Err: fmt.Errorf("[roles.%s] adapter %q is not an adapter (known: %s)", name, a, strings.Join(known, ", "))}
		}
	}
	return nil
}

package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/zwarm/zwarm/sessions/record"
)

// RunnerConfig is config.toml's [runner] table: which runner new sessions'
// supervisors run under. Each runner's own settings are a table beneath
// it, [runner.NAME], declared by its RunnerKind and decoded as strictly as
// any other table.
type RunnerConfig struct {
	// Kind is "local" (the default) or the name of a runner in the
	// registry ("slurm").
	Kind string
}

// decodeRunner decodes [runner]: kind, and one table per runner whose
// section was declared.
func (c *Config) decodeRunner(md toml.MetaData, prim toml.Primitive) error {
	var raw map[string]toml.Primitive
	if err := md.PrimitiveDecode(prim, &raw); err != nil {
		return fmt.Errorf("runner: %w", err)
	}
	for key, p := range raw {
		if key == "kind" {
			if err := md.PrimitiveDecode(p, &c.Runner.Kind); err != nil {
				return fmt.Errorf("runner.kind: %w", err)
			}
			continue
		}
		into := c.sections[RunnerSection(key)]
		if into == nil {
			known := "[runner] kind"
			for _, n := range c.knownRunners() {
				known += ", [runner." + n + "]"
			}
			return fmt.Errorf("unknown key runner.%s (known: %s)", key, known)
		}
		if err := md.PrimitiveDecode(p, into); err != nil {
			return fmt.Errorf("runner.%s: %w", key, err)
		}
	}
	if k := c.Runner.Kind; k != "" && k != record.LocalRunner && c.sections[RunnerSection(k)] == nil {
		return fmt.Errorf("[runner] kind %q is not a runner (known: %s)", k, strings.Join(append([]string{record.LocalRunner}, c.knownRunners()...), ", "))
	}
	return nil
}

// knownRunners are the names of the runners whose tables were declared.
func (c *Config) knownRunners() []string {
	var names []string
	for n := range c.sections {
		if r, ok := strings.CutPrefix(n, "runner."); ok {
			names = append(names, r)
		}
	}
	sort.Strings(names)
	return names
}

// runnerKeys describes [runner] for an error about an unknown key in one
// of its tables, from the declared sections (name to keys).
func runnerKeys(known map[string]string) string {
	var names []string
	for n := range known {
		if strings.HasPrefix(n, "runner.") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	parts := []string{"[runner] kind"}
	for _, n := range names {
		parts = append(parts, "["+n+"] "+known[n])
	}
	return strings.Join(parts, ", ")
}

// JobSetupExitEnv is set in a job whose runner's setup (the commands a
// job runs before its supervisor: [runner.slurm] setup) failed, to the
// setup's exit code: the supervisor the job starts fails the session
// with the setup's output, rather than run the agent without what it set
// up.
const JobSetupExitEnv = "ZWARM_JOB_SETUP_EXIT"

// RunnerSection is the config section name of a runner's table.
func RunnerSection(name string) string { return "runner." + name }

// runner returns the runner a session runs under, made from the config.

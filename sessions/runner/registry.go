package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zwarm/zwarm/sessions/config"
)

// Local is the name of this machine's runner, which is no Runner value.
const Local = "local"

// Registry is the runners a front end knows, besides the local one.
type Registry []Kind

// Names are the runners sessions may run under: local first.
func (reg Registry) Names() []string {
	names := []string{Local}
	for _, k := range reg {
		names = append(names, k.Name)
	}
	return names
}

// Make makes the runner called name from cfg's [runner.NAME] table.
func (reg Registry) Make(name string, cfg *config.Config) (Runner, error) {
	i := slices.IndexFunc(reg, func(k Kind) bool { return k.Name == name })
	if i < 0 {
		return nil, reg.unknown(name)
	}
	r, err := reg[i].New(cfg.Section(config.RunnerSection(name)))
	if err != nil {
		return nil, fmt.Errorf("runner %s: %w", name, err)
	}
	return r, nil
}

// Choose is the runner a new session runs under: the one asked for, else
// cfg's [runner] kind (cfg may be nil), else local; an unknown one is
// refused (ErrInvalidRequest).
func (reg Registry) Choose(asked string, cfg *config.Config) (string, error) {
	name := asked
	if name == "" && cfg != nil {
		name = cfg.Runner.Kind
	}
	if name == "" || name == Local {
		return Local, nil
	}
	if !slices.Contains(reg.Names(), name) {
		return "", reg.unknown(name)
	}
	return name, nil
}

func (reg Registry) unknown(name string) error {
	return config.Invalidf("unknown runner %q (known: %s)", name, strings.Join(reg.Names(), ", "))
}

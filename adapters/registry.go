// Package adapters is the explicit registry of the agent CLIs zwarm can
// supervise. Adding an agent means adding one package and one line here.
package adapters

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/zwarm/zwarm/adapters/claude"
	"github.com/zwarm/zwarm/adapters/codex"
	"github.com/zwarm/zwarm/adapters/replay"
	"github.com/zwarm/zwarm/sessions/agent"
)

// Registry maps adapter names to adapters. It implements agent.Adapters.
type Registry struct {
	byName map[string]agent.Adapter
	hidden map[string]bool
}

// New returns a registry of the given adapters.
func New(list ...agent.Adapter) *Registry {
	r := &Registry{byName: map[string]agent.Adapter{}, hidden: map[string]bool{}}
	for _, a := range list {
		r.byName[a.Name()] = a
	}
	return r
}

// Hide keeps an adapter out of Names, the choices offered to users, while
// Lookup still finds it: the demo's replay player is internal.
func (r *Registry) Hide(names ...string) *Registry {
	for _, n := range names {
		r.hidden[n] = true
	}
	return r
}

// ReplayCommand is the hidden zwarm command that plays a recording.
const ReplayCommand = "__replay"

// Builtin is every adapter zwarm ships. The replay adapter plays its
// recordings (in codex's format) with this zwarm binary's __replay command.
func Builtin() *Registry {
	var player []string
	if exe, err := os.Executable(); err == nil {
		player = []string{exe, ReplayCommand}
	}
	return New(
		codex.New(),
		claude.New(),
		replay.New(func() agent.Parser { return codex.NewParser() }, player),
	).Hide(replay.Name)
}

// Lookup implements agent.Adapters.
func (r *Registry) Lookup(name string) (agent.Adapter, error) {
	if a, ok := r.byName[name]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("unknown adapter %q (known: %s)", name, strings.Join(r.Names(), ", "))
}

// Names implements agent.Adapters: the adapters a user may choose, in
// order. Hidden ones are left out.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		if !r.hidden[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

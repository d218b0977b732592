package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/adapters/claude"
	"github.com/zwarm/zwarm/adapters/codex"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
)

// publicAdapters are the adapters a user chooses from (not the demo's
// internal replay player).
func publicAdapters() []string { return adapters.Builtin().Names() }

var sandboxes = []string{
	"read-only\tcodex: read files only",
	"workspace-write\tcodex: write in the working dir (default)",
	"danger-full-access\tno sandbox at all",
	"acceptEdits\tclaude: edits without asking (default)",
	"plan\tclaude: plan only",
	"bypassPermissions\tclaude: every tool without asking",
}

// completeIDs completes session ids, each described by its task, among the
// sessions pick accepts (nil: all).
func completeIDs(f *factory, pick func(*record.Session) bool) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		m, err := f.manager()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		list, _ := m.List(c.Context(), listing.Options{})
		short := map[string]int{}
		for _, s := range list {
			short[record.ShortID(s.ID)]++
		}
		var out []cobra.Completion
		for _, s := range list {
			if pick != nil && !pick(s) {
				continue
			}
			id := record.ShortID(s.ID)
			if short[id] > 1 {
				id = s.ID // the short form would be ambiguous
			}
			if strings.HasPrefix(id, strings.ToLower(prefix)) {
				out = append(out, cobra.CompletionWithDesc(id, string(s.Status())+": "+render.Clip(s.Task, 60)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFlags completes the values of the flags a command has among
// --adapter, --sandbox, --status and --source.
func completeFlags(c *cobra.Command, f *factory) {
	fixed := func(vals ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
	}
	if c.Flags().Lookup("adapter") != nil {
		c.RegisterFlagCompletionFunc("adapter", fixed(publicAdapters()...))
	}
	if c.Flags().Lookup("sandbox") != nil {
		c.RegisterFlagCompletionFunc("sandbox", fixed(sandboxes...))
	}
	if c.Flags().Lookup("status") != nil {
		var st []string
		for _, s := range record.Statuses {
			st = append(st, string(s))
		}
		c.RegisterFlagCompletionFunc("status", fixed(st...))
	}
	if c.Flags().Lookup("source") != nil {
		c.RegisterFlagCompletionFunc("source", fixed("user", "mcp", "run:"))
	}
	if c.Flags().Lookup("reasoning-effort") != nil {
		c.RegisterFlagCompletionFunc("reasoning-effort", fixed(efforts()...))
	}
	if c.Flags().Lookup("role") != nil {
		c.RegisterFlagCompletionFunc("role", completeRoles(f))
	}
	if c.Flags().Lookup("dir") != nil {
		c.RegisterFlagCompletionFunc("dir", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		})
	}
}

// efforts are the reasoning efforts of every adapter, each once.
func efforts() []string {
	var out []string
	for _, e := range append(append([]string(nil), codex.Efforts...), claude.Efforts...) {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// completeRoles completes the roles config.toml defines.
func completeRoles(f *factory) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		m, err := f.manager()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		cfg, err := m.Config()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		return cfg.RoleNames(), cobra.ShellCompDirectiveNoFileComp
	}
}

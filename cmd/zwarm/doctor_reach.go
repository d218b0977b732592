package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/render"
)

// reachCheck notes where an agent's sandbox lets a worker write what the
// worktrees exist to keep from it: the repository here, or the state dir
// (codex's workspace-write reaches /tmp and $TMPDIR unless excluded).
func reachCheck(name string, ad agent.Adapter, req agent.TurnRequest, stateDir, wd string, add func(check)) {
	r, ok := ad.(agent.Reacher)
	if !ok {
		return
	}
	kept := map[string]string{stateDir: "the state dir " + stateDir}
	if top := gitTopAbove(wd); top != "" {
		kept[top] = "your repository " + top
	}
	for _, reach := range r.Reaches(req) {
		var held []string
		for path, what := range kept {
			if beneath(path, reach.Dir) {
				held = append(held, what)
			}
		}
		if len(held) == 0 {
			continue
		}
		sort.Strings(held)
		add(check{name: "sandbox", ok: true, note: true, result: fmt.Sprintf("%s workers may write %s, which holds %s: they can change it there; %s (docs/worktrees.md)",
			name, render.SafeLine(reach.Dir), render.SafeLine(strings.Join(held, " and ")), reach.Remedy)})
	}
}

// beneath is within, symlinks resolved on both sides (/tmp may be one).
func beneath(path, dir string) bool {
	resolve := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	return within(resolve(dir), resolve(path))
}

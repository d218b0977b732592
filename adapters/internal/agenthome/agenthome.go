// Package agenthome finds the files an agent keeps of its own sessions
// (codex's rollouts, claude's transcripts), as the agent started by this
// process would write them.
package agenthome

import (
	"path/filepath"
	"slices"
)

// Find is the newest file of the agent's home matching pattern (a glob
// relative to it): the home is $env, else ~/dflt. "" when none matches.
// id, the session's, must be a plain name: it is part of the pattern.
func Find(env, dflt, id string, pattern func(id string) string) string {
	if id == "" || filepath.Base(id) != id {
		return ""
	}
	home := Home(env, dflt)
	if home == "" {
		return ""
	}
	found, _ := filepath.Glob(filepath.Join(home, pattern(id)))
	if len(found) == 0 {
		return ""
	}
	slices.Sort(found)
	return found[len(found)-1]
}

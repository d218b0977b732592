package agenthome

import (
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Home is the agent's home: $env, else ~/dflt ("" when neither is known).
func Home(env, dflt string) string {
	if home := os.Getenv(env); home != "" {
		return home
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(h, dflt)
}

// WrittenSince is the files matching patterns (globs relative to home)
// written at or after since, the last written last.
func WrittenSince(home string, since time.Time, patterns ...string) []string {
	type file struct {
		path string
		mod  time.Time
	}
	var found []file
	seen := map[string]bool{}
	for _, p := range patterns {
		paths, _ := filepath.Glob(filepath.Join(home, p))
		for _, path := range paths {
			fi, err := os.Stat(path)
			if err != nil || seen[path] || fi.ModTime().Before(since) {
				continue
			}
			seen[path] = true
			found = append(found, file{path, fi.ModTime()})
		}
	}
	slices.SortFunc(found, func(a, b file) int { return a.mod.Compare(b.mod) })
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.path
	}
	return out
}

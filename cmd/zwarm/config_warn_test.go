package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A typo in config.toml is reported whatever the command, once: a command
// that refuses says why (exit 2), one that goes on warns, with the
// defaults taken. show, land, rm, runs and others said nothing, and land
// landed.
func TestEveryCommandReportsABrokenConfigOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "quick"))[0]
	if err := os.WriteFile(filepath.Join(w.State, "config.toml"), []byte("kill_grac = \"2s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const typo = "unknown key kill_grac"
	for _, args := range [][]string{{"show", id}, {"logs", id}, {"ls"}, {"runs"}, {"rm", "--dry-run", "--all"}, {"clean"}, {"kill", "--all"}, {"wait", id}, {"spawn", "again"}, {"doctor"}} {
		r := w.zwarm(args...)
		if n := strings.Count(r.stdout+r.stderr, typo); n != 1 {
			t.Errorf("zwarm %s: the typo named %d times (exit %d)\nstdout %q\nstderr %q", strings.Join(args, " "), n, r.code, r.stdout, r.stderr)
		}
	}
}

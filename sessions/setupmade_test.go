package sessions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// What the setup command makes (npm ci's node_modules in a repository
// that does not ignore it, a generated file) is not the worker's change:
// it is never committed, diffed or landed as the worker's, and the setup
// log says so.
func TestWhatSetupMakesIsNotTheWorkersChange(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	w.WriteConfig("[worktrees]\nsetup = \"mkdir -p node_modules/dep && echo dep > node_modules/dep/index.js && echo gen > generated.txt\"\n")
	w.agent("echo work > work.txt")
	s := w.wait(w.spawnIn(w.Work, "work", sessions.SpawnRequest{}).ID)
	if s.Status() != record.StatusCompleted {
		t.Fatalf("status %s (%s)", s.Status(), s.Error)
	}
	if got := w.diff(s.ID, sessions.DiffRequest{Options: workspace.DiffOptions{Format: workspace.NamesOnly}}); got != "work.txt\n" {
		t.Fatalf("diff: %q, want only the worker's work.txt", got)
	}
	if log := readFile(t, w.Store.SetupLog(s.ID)); !strings.Contains(log, "setup made node_modules: not the worker's") || !strings.Contains(log, "setup made generated.txt") {
		t.Fatalf("setup log:\n%s", log)
	}
	if _, err := w.Manager.Land(context.Background(), s.ID, sessions.LandOptions{Dir: w.Work}); err != nil {
		t.Fatal(err)
	}
	if got := git(t, w.Work, "ls-tree", "--name-only", "HEAD"); got != "a.txt\nwork.txt" {
		t.Fatalf("main after landing: %q", got)
	}
	if _, err := os.Stat(filepath.Join(w.Work, "node_modules")); !os.IsNotExist(err) {
		t.Fatal("setup's node_modules landed in your checkout")
	}
}

package main

import (
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
)

// spawn -n starts that many workers on one task, each in a worktree of its
// own; with --wait it waits for all of them and says how each ended, and
// --json is the list of them.
func TestSpawnMany(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"README": "hello\n"})
	w.setScript(agentDoes(`echo "$PWD" > where.txt`))
	var list []session
	mustJSON(t, w.ok("spawn", "-n", "3", "--wait", "--json", "--", "say where you are"), &list)
	if len(list) != 3 {
		t.Fatalf("spawn -n 3 --json gave %d sessions", len(list))
	}
	trees := map[string]bool{}
	for _, s := range list {
		if s.Status() != record.StatusCompleted || s.Worktree == "" || trees[s.Worktree] {
			t.Fatalf("a worker: %s %q in worktree %q (seen: %v)", s.Status(), s.Error, s.Worktree, trees)
		}
		trees[s.Worktree] = true
	}
	r := w.zwarm("spawn", "-n", "2", "--", "again")
	if ids := lines(r.stdout); r.code != 0 || len(ids) != 2 || len(w.IDs()) != 5 {
		t.Fatalf("spawn -n 2: %+v", r)
	}
	for _, bad := range []string{"0", "1001", "x"} {
		if r := w.zwarm("spawn", "-n", bad, "--", "none"); r.code != 2 || r.stderr == "" {
			t.Errorf("spawn -n %s: %+v", bad, r)
		}
	}
}

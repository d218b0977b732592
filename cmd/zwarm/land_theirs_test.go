package main

import (
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// A worker that merges one of your branches into its own, keeping none of
// its changes (git merge -s ours), would have land --merge mark that
// branch merged into main without them, and git branch -d then delete it
// as merged: --merge, and its dry run, refuse, naming your commit; a
// squash lands only what diff shows.
func TestLandMergeNeverPassesOffYourBranchAsMerged(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	w.git(w.Work, "checkout", "-q", "-b", "feature")
	writeFile(t, w.Work+"/feature.txt", "important feature\n")
	w.git(w.Work, "add", "feature.txt")
	w.git(w.Work, "commit", "-q", "-m", "user feature work")
	feature := w.git(w.Work, "rev-parse", "--short", "HEAD")
	w.git(w.Work, "checkout", "-q", "main")
	w.setScript(fakeagent.Completes("done", 700),
		"merge it away", agentDoes(`git merge -q -s ours -m merged feature && echo m > m.txt`))
	id := strings.TrimSpace(w.ok("spawn", "--wait", "merge it away"))
	id = strings.Fields(id)[0]
	if got := w.ok("diff", "--name-only", id); strings.TrimSpace(got) != "m.txt" {
		t.Fatalf("diff names %q", got)
	}
	for _, args := range [][]string{{"land", "--merge", "--dry-run", id}, {"land", "--merge", id}} {
		r := w.zwarm(args...)
		if r.code != 1 || !strings.Contains(r.stderr, "its branch has merged 1 commit of your branches or tags that main lacks ("+feature+" user feature work)") {
			t.Fatalf("%v: exit %d, %q", args, r.code, r.stderr)
		}
	}
	if out := w.git(w.Work, "branch", "--merged", "main"); strings.Contains(out, "feature") {
		t.Fatalf("feature reads as merged into main:\n%s", out)
	}
	// A branch of yours made on the worker's own commits (to try them)
	// holds nothing the worker merged in: it does not count.
	w.git(w.Work, "branch", "trying", "zwarm/"+id+"~1")
	if r := w.zwarm("land", "--merge", "--dry-run", id); !strings.Contains(r.stderr, "merged 1 commit of your") {
		t.Fatalf("with a branch on the worker's own commit: exit %d, %q", r.code, r.stderr)
	}
	w.ok("land", "--squash", id)
	if got := w.git(w.Work, "show", "--name-only", "--format=", "HEAD"); got != "m.txt" {
		t.Fatalf("the squash landed %q", got)
	}
	if out := w.git(w.Work, "branch", "--merged", "main"); strings.Contains(out, "feature") {
		t.Fatalf("after the squash, feature reads as merged into main:\n%s", out)
	}
}

// A landing refused before its verify runs does not say it verifies.
func TestARefusedLandingSaysNothingOfItsVerify(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	w.setScript(agentDoes("echo worker > a.txt"))
	id := strings.Fields(w.ok("spawn", "--wait", "change a"))[0]
	writeFile(t, w.Work+"/a.txt", "yours, uncommitted\n")
	r := w.zwarm("land", id, "--verify", "echo the-verify-ran")
	if r.code != 1 || !strings.Contains(r.stderr, "would overwrite") || strings.Contains(r.stderr, "verifying") || strings.Contains(r.stderr, "the-verify-ran") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	w.git(w.Work, "checkout", "a.txt")
	if r := w.zwarm("land", id, "--verify", "echo the-verify-ran"); r.code != 0 || !strings.Contains(r.stderr, "verifying "+id[:8]) || !strings.Contains(r.stderr, "the-verify-ran") {
		t.Fatalf("the landing: exit %d, stderr %q", r.code, r.stderr)
	}
}

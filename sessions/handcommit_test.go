package sessions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions"
)

// Commits someone makes by hand on a worker's branch after its turn are
// part of its change: diff shows them, land --dry-run and land count and
// land them, and neither land nor rm ever deletes one that did not land.
func TestHandCommitsOnAWorkersBranchLandAndAreNeverDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	w.agent("echo turn > turn.txt")
	s := w.wait(w.spawnIn(w.Work, "add turn.txt", sessions.SpawnRequest{}).ID)
	wt := s.Workspace.Path
	handCommit := func(file string) string {
		t.Helper()
		writeFile(t, filepath.Join(wt, file), "by hand\n")
		git(t, wt, "add", file)
		git(t, wt, "-c", "user.name=You", "-c", "user.email=you@example.com", "commit", "-q", "-m", "fix by hand")
		return git(t, wt, "rev-parse", "HEAD")
	}
	handCommit("fix.txt")

	if got := w.diff(s.ID, sessions.DiffRequest{}); !strings.Contains(got, "fix.txt") || !strings.Contains(got, "turn.txt") {
		t.Fatalf("diff lacks the hand commit or the turn's file:\n%s", got)
	}
	dry, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, DryRun: true})
	if err != nil || dry.Stat.Files != 2 || dry.Nothing {
		t.Fatalf("land --dry-run: %v, %v; want 2 files (the turn's and the hand commit's)", dryStat(dry), err)
	}
	res, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, Keep: true, Verify: "test -f fix.txt && test -f turn.txt"})
	if err != nil || res.Stat.Files != 2 || !res.Verified {
		t.Fatalf("land --keep --verify: %v, %v; want both files landed, verified", dryStat(res), err)
	}
	for _, f := range []string{"turn.txt", "fix.txt"} {
		if _, err := os.Stat(filepath.Join(w.Work, f)); err != nil {
			t.Fatalf("%s did not land: %v", f, err)
		}
	}

	// After land --keep, another hand commit: rm refuses to drop it,
	// and a second landing takes it.
	later := handCommit("later.txt")
	_, err = w.Manager.Remove(ctx, s.ID, false)
	var ue *sessions.UnlandedError
	if !errors.As(err, &ue) || ue.Commits != 1 {
		t.Fatalf("rm after a hand commit on a kept branch: %v; want a refusal naming 1 commit never landed", err)
	}
	if got := git(t, w.Work, "rev-parse", "zwarm/"+s.ID); got != later {
		t.Fatalf("the branch is at %s after the refused rm, want the hand commit %s", got, later)
	}
	res, err = w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil || res.Already || res.Stat.Files != 1 {
		t.Fatalf("second land: %v, %v; want later.txt landed", dryStat(res), err)
	}
	if _, err := os.Stat(filepath.Join(w.Work, "later.txt")); err != nil {
		t.Fatalf("later.txt did not land: %v", err)
	}
}

// A branch moved off the worker's last commit by hand (reset, amend) is
// not guessed at: land refuses and says how to go on, rm refuses to drop
// the commits only one of the two has.
func TestABranchMovedOffTheWorkersCommitIsRefusedNotGuessed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	w.agent("echo turn > turn.txt")
	s := w.wait(w.spawnIn(w.Work, "add turn.txt", sessions.SpawnRequest{}).ID)
	wt := s.Workspace.Path
	git(t, wt, "reset", "-q", "--hard", "HEAD~1")
	writeFile(t, filepath.Join(wt, "other.txt"), "other\n")
	git(t, wt, "add", "other.txt")
	git(t, wt, "-c", "user.name=You", "-c", "user.email=you@example.com", "commit", "-q", "-m", "another way")
	before := git(t, w.Work, "rev-parse", "main")
	if _, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work}); err == nil || !strings.Contains(err.Error(), "moved off the worker's last commit") || !strings.Contains(err.Error(), "reset --keep") {
		t.Fatalf("land of a branch moved by hand: %v; want a refusal that says how to go on", err)
	}
	if got := git(t, w.Work, "rev-parse", "main"); got != before {
		t.Fatal("the refused landing moved main")
	}
	var ue *sessions.UnlandedError
	if _, err := w.Manager.Remove(ctx, s.ID, false); !errors.As(err, &ue) || ue.Commits != 2 {
		t.Fatalf("rm: %v; want a refusal naming the worker's commit and the one made by hand", err)
	}
}

func dryStat(r *sessions.LandResult) any {
	if r == nil {
		return nil
	}
	return struct {
		Files            int
		Nothing, Already bool
	}{r.Stat.Files, r.Nothing, r.Already}
}

// A file changed by hand in a worker's worktree after its turn is not
// the worker's: a landing leaves it there, and rm refuses to drop it.
// What rm says to do (commit it there, land again) lands it.
func TestAFileChangedByHandLandsOnceCommittedAsRmSays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	w.agent("echo turn > turn.txt")
	s := w.wait(w.spawnIn(w.Work, "add turn.txt", sessions.SpawnRequest{}).ID)
	wt := s.Workspace.Path
	writeFile(t, filepath.Join(wt, "extra.txt"), "by hand\n")
	if _, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work}); err != nil {
		t.Fatal(err)
	}
	_, err := w.Manager.Remove(ctx, s.ID, false)
	var ue *sessions.UnlandedError
	if !errors.As(err, &ue) || ue.Uncommitted != 1 || !ue.ByHand {
		t.Fatalf("rm with a file changed by hand: %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "changed by hand") || !strings.Contains(msg, "(cd "+wt+" && git add -A && git commit)") || strings.Contains(msg, "zwarm diff") {
		t.Fatalf("rm says %q", msg)
	}
	git(t, wt, "add", "-A")
	git(t, wt, "-c", "user.name=You", "-c", "user.email=you@example.com", "commit", "-q", "-m", "extra, by hand")
	if res, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work}); err != nil || res.Already || !res.Removed {
		t.Fatalf("land after the commit rm asked for: %+v %v", res, err)
	}
	if got := readFile(t, filepath.Join(w.Work, "extra.txt")); got != "by hand\n" {
		t.Fatalf("extra.txt in your checkout: %q", got)
	}
}

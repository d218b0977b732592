package sessions_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// land --dry-run, land and diff act on the same change. A worker whose
// supervisor died with all its work uncommitted: the dry run counts that
// work (it said the branch had it all already), and land lands it.
func TestADryRunOfUncommittedWorkSaysWhatLandLands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	w.agent(`echo half > half.txt; sleep 300`)
	s := w.spawnIn(w.Work, "half", sessions.SpawnRequest{})
	var sup *proc.Ref
	sessionstest.Eventually(t, "the worker to write", func() bool {
		g, _ := w.Manager.Get(ctx, s.ID)
		sup = g.Owner
		_, err := os.Stat(filepath.Join(s.Workspace.Path, "half.txt"))
		return sup != nil && sup.Role == record.RoleSupervisor && g.Agent != nil && err == nil
	})
	syscall.Kill(sup.PID, syscall.SIGKILL)
	s = w.wait(s.ID)
	// ls and show say the work is there, uncommitted, not that the
	// turn has not ended.
	if got := s.ChangesText(); got != "uncommitted" {
		t.Errorf("CHANGES of a worker whose supervisor died before the turn's commit: %q", got)
	}
	for _, f := range render.WorkspaceFields(s, time.Now()) {
		if f.Name == "changes" && !strings.Contains(f.Text, "not committed: the turn ended without its commit") {
			t.Errorf("show says the changes are %q", f.Text)
		}
	}
	dry, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, DryRun: true})
	if err != nil || dry.Nothing || dry.Stat.Files != 1 || !dry.Uncommitted {
		t.Fatalf("land --dry-run: %v %v; want half.txt counted, uncommitted", dryStat(dry), err)
	}
	if st := git(t, s.Workspace.Path, "status", "--porcelain"); st != "?? half.txt" {
		t.Fatalf("the dry run changed the worktree: %q", st)
	}
	res, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil || res.Nothing || res.Stat != dry.Stat {
		t.Fatalf("land: %v %v; want what the dry run said, %v", dryStat(res), err, dry.Stat)
	}
}

// A worker that reset its branch below its base: diff shows the change
// from the base (the base's b.txt deleted, its w.txt added), and land
// lands exactly that, as a squash; a merge, which would land something
// else, is refused.
func TestABranchResetBelowItsBaseLandsWhatDiffShows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	writeFile(t, filepath.Join(w.Work, "b.txt"), "b\n")
	git(t, w.Work, "add", "b.txt")
	git(t, w.Work, "commit", "-q", "-m", "b")
	w.agent(`git reset -q --hard HEAD~1; echo w > w.txt`)
	s := w.wait(w.spawnIn(w.Work, "reset and write", sessions.SpawnRequest{}).ID)
	if got := w.diff(s.ID, sessions.DiffRequest{Options: workspace.DiffOptions{Format: workspace.NamesOnly}}); got != "b.txt\nw.txt\n" {
		t.Fatalf("diff: %q", got)
	}
	if _, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, Strategy: workspace.Merge}); err == nil || !strings.Contains(err.Error(), "no longer descends") {
		t.Fatalf("land --merge: %v; want a refusal", err)
	}
	dry, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, DryRun: true})
	if err != nil || dry.Stat.Files != 2 {
		t.Fatalf("land --dry-run: %v %v", dryStat(dry), err)
	}
	if _, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work}); err != nil {
		t.Fatal(err)
	}
	if got := git(t, w.Work, "ls-tree", "--name-only", "HEAD"); got != "a.txt\nw.txt" {
		t.Fatalf("main after landing: %q; want what diff showed (b.txt deleted, w.txt added)", got)
	}
}

// A conflict a dry run finds (the dashboard's L plans with one) is
// recorded as a refused landing's is: ls shows the change as conflicting,
// not as landable.
func TestAConflictFoundDryIsRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := repoWorld(t, map[string]string{"a.txt": "1\n2\n3\n"})
	w.agent(`printf '1\nfirst\n3\n' > a.txt`)
	first := w.wait(w.spawnIn(w.Work, "first", sessions.SpawnRequest{}).ID)
	w.agent(`printf '1\nsecond\n3\n' > a.txt`)
	second := w.wait(w.spawnIn(w.Work, "second", sessions.SpawnRequest{}).ID)
	if _, err := w.Manager.Land(ctx, first.ID, sessions.LandOptions{Dir: w.Work}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Manager.Land(ctx, second.ID, sessions.LandOptions{Dir: w.Work, DryRun: true}); err == nil {
		t.Fatal("the dry run found no conflict")
	}
	if s, _ := w.Manager.Get(ctx, second.ID); s.ChangesText() != "conflict" {
		t.Fatalf("after a dry run found the conflict, listed as %q", s.ChangesText())
	}
}

// A conflict a person resolves by hand in the worktree (git merge of the
// target, the file fixed, the merge committed): the dry run and the
// landing see the same change, and it lands as resolved.
func TestAConflictResolvedByHandLandsAsTheDryRunSays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := repoWorld(t, map[string]string{"a.txt": "1\n2\n3\n"})
	w.agent(`printf '1\nfirst\n3\n' > a.txt`)
	first := w.wait(w.spawnIn(w.Work, "first", sessions.SpawnRequest{}).ID)
	w.agent(`printf '1\nsecond\n3\n' > a.txt; echo b > b.txt`)
	second := w.wait(w.spawnIn(w.Work, "second", sessions.SpawnRequest{}).ID)
	if _, err := w.Manager.Land(ctx, first.ID, sessions.LandOptions{Dir: w.Work}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Manager.Land(ctx, second.ID, sessions.LandOptions{Dir: w.Work}); err == nil {
		t.Fatal("the second landing found no conflict")
	}
	wt := second.Workspace.Path
	main := git(t, w.Work, "rev-parse", "main")
	cmd := exec.Command("git", "-c", "user.name=You", "-c", "user.email=you@example.com", "merge", "-q", main)
	cmd.Dir = wt
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the hand merge did not conflict: %s", out)
	}
	writeFile(t, filepath.Join(wt, "a.txt"), "1\nfirst and second\n3\n")
	git(t, wt, "add", "a.txt")
	git(t, wt, "-c", "user.name=You", "-c", "user.email=you@example.com", "commit", "-q", "--no-edit")

	dry, err := w.Manager.Land(ctx, second.ID, sessions.LandOptions{Dir: w.Work, DryRun: true})
	if err != nil || dry.Nothing {
		t.Fatalf("land --dry-run after the conflict was resolved by hand: %v %v", dryStat(dry), err)
	}
	res, err := w.Manager.Land(ctx, second.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil || res.Stat != dry.Stat || !slices.Equal(fileNames(res.Files), fileNames(dry.Files)) {
		t.Fatalf("land: %v %v %v; want what the dry run said: %v %v", dryStat(res), fileNames(res.Files), err, dry.Stat, fileNames(dry.Files))
	}
	if got := git(t, w.Work, "show", "main:a.txt"); got != "1\nfirst and second\n3" {
		t.Fatalf("a.txt on main: %q, want the hand resolution", got)
	}
	if got := git(t, w.Work, "show", "main:b.txt"); got != "b" {
		t.Fatalf("b.txt on main: %q", got)
	}
}

func fileNames(fs []workspace.FileStat) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

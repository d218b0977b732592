package sessions

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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
	s := w.spawnIn(w.work, "half", SpawnRequest{})
	var sup *ProcRef
	eventually(t, "the worker to write", func() bool {
		g, _ := w.m.Get(ctx, s.ID)
		sup = g.Owner
		_, err := os.Stat(filepath.Join(s.Workspace.Path, "half.txt"))
		return sup != nil && sup.Role == roleSupervisor && g.Agent != nil && err == nil
	})
	syscall.Kill(sup.PID, syscall.SIGKILL)
	s = w.wait(s.ID)
	dry, err := w.m.Land(ctx, s.ID, LandOptions{Dir: w.work, DryRun: true})
	if err != nil || dry.Nothing || dry.Stat.Files != 1 || !dry.Uncommitted {
		t.Fatalf("land --dry-run: %v %v; want half.txt counted, uncommitted", dryStat(dry), err)
	}
	if st := git(t, s.Workspace.Path, "status", "--porcelain"); st != "?? half.txt" {
		t.Fatalf("the dry run changed the worktree: %q", st)
	}
	res, err := w.m.Land(ctx, s.ID, LandOptions{Dir: w.work})
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
	writeFile(t, filepath.Join(w.work, "b.txt"), "b\n")
	git(t, w.work, "add", "b.txt")
	git(t, w.work, "commit", "-q", "-m", "b")
	w.agent(`git reset -q --hard HEAD~1; echo w > w.txt`)
	s := w.wait(w.spawnIn(w.work, "reset and write", SpawnRequest{}).ID)
	if got := w.diff(s.ID, DiffRequest{Options: workspace.DiffOptions{Format: workspace.NamesOnly}}); got != "b.txt\nw.txt\n" {
		t.Fatalf("diff: %q", got)
	}
	if _, err := w.m.Land(ctx, s.ID, LandOptions{Dir: w.work, Strategy: workspace.Merge}); err == nil || !strings.Contains(err.Error(), "no longer descends") {
		t.Fatalf("land --merge: %v; want a refusal", err)
	}
	dry, err := w.m.Land(ctx, s.ID, LandOptions{Dir: w.work, DryRun: true})
	if err != nil || dry.Stat.Files != 2 {
		t.Fatalf("land --dry-run: %v %v", dryStat(dry), err)
	}
	if _, err := w.m.Land(ctx, s.ID, LandOptions{Dir: w.work}); err != nil {
		t.Fatal(err)
	}
	if got := git(t, w.work, "ls-tree", "--name-only", "HEAD"); got != "a.txt\nw.txt" {
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
	first := w.wait(w.spawnIn(w.work, "first", SpawnRequest{}).ID)
	w.agent(`printf '1\nsecond\n3\n' > a.txt`)
	second := w.wait(w.spawnIn(w.work, "second", SpawnRequest{}).ID)
	if _, err := w.m.Land(ctx, first.ID, LandOptions{Dir: w.work}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.m.Land(ctx, second.ID, LandOptions{Dir: w.work, DryRun: true}); err == nil {
		t.Fatal("the dry run found no conflict")
	}
	if s, _ := w.m.Get(ctx, second.ID); s.ChangesText() != "conflict" {
		t.Fatalf("after a dry run found the conflict, listed as %q", s.ChangesText())
	}
}

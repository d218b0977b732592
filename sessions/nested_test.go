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

// A repository the worker made inside its worktree (git init, a clone)
// is never committed as a link to commits that exist only there: the
// turn's work stays uncommitted with the reason, diff and land refuse it
// saying what to do, rm keeps it; once its .git is gone its files land
// as the worker's.
func TestANestedRepositoryIsRefusedNeverLandedAsALinkToNowhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct{ name, script string }{
		{"with a commit", "git init -q app && echo app > app/f.txt && git -C app add f.txt && git -C app -c user.name=w -c user.email=w@x commit -q -m app && echo top > top.txt"},
		{"without a commit", "git init -q app && echo app > app/f.txt && echo top > top.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := repoWorld(t, map[string]string{"a.txt": "a\n"})
			w.agent(tc.script)
			s := w.wait(w.spawnIn(w.Work, "make app", sessions.SpawnRequest{}).ID)
			if !strings.Contains(s.Workspace.Error, "app/ is a git repository of its own") {
				t.Fatalf("the turn's work: error %q; want the nested repository named", s.Workspace.Error)
			}
			var buf strings.Builder
			if _, err := w.Manager.Diff(ctx, s.ID, &buf, sessions.DiffRequest{}); err == nil || !strings.Contains(err.Error(), "remove its .git") {
				t.Fatalf("diff: %v; want a refusal that says what to do", err)
			}
			before := git(t, w.Work, "rev-parse", "main")
			if _, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work}); err == nil || !strings.Contains(err.Error(), "app/") {
				t.Fatalf("land: %v; want a refusal naming app/", err)
			}
			if got := git(t, w.Work, "rev-parse", "main"); got != before {
				t.Fatal("the refused landing moved main")
			}
			// rm's refusal says what to do, not to land or diff it, which
			// both refuse.
			var ue *sessions.UnlandedError
			_, err := w.Manager.Remove(ctx, s.ID, false)
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), `app/ is a git repository of its own`) || !strings.Contains(err.Error(), `remove app/.git"), then land it`) || strings.Contains(err.Error(), "zwarm diff") {
				t.Fatalf("rm: %v; want a refusal saying to remove app/.git", err)
			}
			// The worker removes the nested .git: its files are its work.
			if err := os.RemoveAll(filepath.Join(s.Workspace.Path, "app", ".git")); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work}); err != nil {
				t.Fatal(err)
			}
			if got := git(t, w.Work, "ls-tree", "-r", "--format=%(objectmode) %(path)", "HEAD"); !strings.Contains(got, "100644 app/f.txt") || !strings.Contains(got, "100644 top.txt") {
				t.Fatalf("main's tree after landing:\n%s\nwant app/f.txt and top.txt as files", got)
			}
		})
	}
}

// A worker that commits its nested repository as a submodule itself (git
// add app, git commit) made a link to a commit only app/.git has: land
// refuses it.
func TestALinkToACommitTheRepositoryLacksIsNotLanded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := repoWorld(t, map[string]string{"a.txt": "a\n"})
	w.agent("git init -q app && echo app > app/f.txt && git -C app add f.txt && git -C app -c user.name=w -c user.email=w@x commit -q -m app && " +
		"git add app 2>/dev/null; git -c user.name=w -c user.email=w@x commit -q -m link")
	s := w.wait(w.spawnIn(w.Work, "link app", sessions.SpawnRequest{}).ID)
	before := git(t, w.Work, "rev-parse", "main")
	if _, err := w.Manager.Land(ctx, s.ID, sessions.LandOptions{Dir: w.Work}); err == nil || !strings.Contains(err.Error(), "link to a commit this repository does not have") {
		t.Fatalf("land: %v; want a refusal of the link to nowhere", err)
	}
	if got := git(t, w.Work, "rev-parse", "main"); got != before {
		t.Fatal("the refused landing moved main")
	}
}

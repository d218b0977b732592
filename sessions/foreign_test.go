package sessions_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions"
)

// editRecord changes a session's meta.json as a person, or a worker that
// can write the state dir (one working in place), could.
func editRecord(t *testing.T, w *world, id string, change func(ws map[string]any)) {
	t.Helper()
	p := w.Store.MetaPath(id)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	change(rec["workspace"].(map[string]any))
	if b, err = json.Marshal(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// usersDir is a directory of the user's, with a file in it.
func usersDir(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(path, "thesis.tex")
	if err := os.WriteFile(f, []byte("years of work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// A record that names a directory zwarm never makes for its session (a
// path, a worker's repository or a branch of the user's) is refused as
// unreadable: rm deletes none of it, and rm --force forgets the session
// and leaves what the record named.
func TestARecordNamingAnotherDirectoryMakesRmDeleteNothing(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"README": "hi\n"})
	victims := t.TempDir()
	for _, c := range []struct {
		name   string
		change func(ws map[string]any, victim string)
		says   string
	}{
		{"path", func(ws map[string]any, v string) { ws["path"] = v }, "is not a directory zwarm makes for it"},
		{"path and its repository", func(ws map[string]any, v string) {
			ws["path"], ws["own_git_dir"] = v, v+".git"
		}, "is not a directory zwarm makes for it"},
		{"its repository", func(ws map[string]any, v string) { ws["own_git_dir"] = v }, "is not the one zwarm makes beside its worktree"},
		{"a branch of the user's", func(ws map[string]any, v string) { ws["branch"] = "main" }, `its branch "main" is not the one zwarm makes`},
		{"its own path, with a slash after", func(ws map[string]any, v string) { ws["path"] = ws["path"].(string) + "/" }, "is not a directory zwarm makes for it"},
		// The worktree's git dir climbing out of the worktrees dir, to a
		// repository of the user's: rm swept it, then removed it whole.
		{"a git dir climbing out", func(ws map[string]any, v string) {
			delete(ws, "own_git_dir")
			ws["git_dir"], ws["admin_dir"] = v, v+"/worktrees/.."
		}, "is not the one git makes for it"},
		{"a git dir of another name", func(ws map[string]any, v string) {
			delete(ws, "own_git_dir")
			ws["git_dir"], ws["admin_dir"] = v, v+"/worktrees/mine"
		}, "is not the one git makes for it"},
	} {
		s := w.wait(w.spawnIn(w.Work, "nothing to change", sessions.SpawnRequest{}).ID)
		victim := filepath.Join(victims, strings.ReplaceAll(c.name, " ", "-"))
		file := usersDir(t, victim)
		usersDir(t, victim+".git")
		editRecord(t, w, s.ID, func(ws map[string]any) { c.change(ws, victim) })
		ctx := context.Background()
		if _, err := w.Manager.Remove(ctx, s.ID, false); err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), "rm --force") {
			t.Errorf("%s: rm: %v", c.name, err)
		}
		if _, err := w.Manager.Remove(ctx, s.ID, true); err != nil {
			t.Errorf("%s: rm --force: %v", c.name, err)
		}
		if _, err := os.Stat(file); err != nil {
			t.Errorf("%s: rm deleted what the record named: %v", c.name, err)
		}
		if _, err := os.Stat(filepath.Join(victim+".git", "thesis.tex")); err != nil {
			t.Errorf("%s: rm deleted the repository the record named: %v", c.name, err)
		}
		if _, err := w.Manager.Get(ctx, s.ID); !errors.Is(err, sessions.ErrNotFound) {
			t.Errorf("%s: rm --force left the session: %v", c.name, err)
		}
	}
	if got := git(t, w.Work, "rev-parse", "--verify", "main"); got == "" {
		t.Fatal("main is gone")
	}
}

// A record that names a worktree of zwarm's making for the same session id
// in another state dir (a worker can read where they are) is not this
// state dir's to delete: the owner file beside the worktree says whose it
// is. rm refuses; rm --force forgets the session and leaves the worktree.
func TestAnotherStateDirsWorktreeIsNotRemoved(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"README": "hi\n"})
	s := w.wait(w.spawnIn(w.Work, "nothing to change", sessions.SpawnRequest{}).ID)
	theirs := filepath.Join(t.TempDir(), "wt", s.ID)
	file := usersDir(t, theirs)
	usersDir(t, theirs+".git")
	other := t.TempDir()
	if err := os.WriteFile(theirs+".state", []byte(other+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	editRecord(t, w, s.ID, func(ws map[string]any) { ws["path"], ws["own_git_dir"] = theirs, theirs+".git" })
	ctx := context.Background()
	if _, err := w.Manager.Remove(ctx, s.ID, false); err == nil {
		t.Error("rm removed it")
	}
	if _, err := w.Manager.Remove(ctx, s.ID, true); err != nil {
		t.Fatalf("rm --force: %v", err)
	}
	for _, f := range []string{file, filepath.Join(theirs+".git", "thesis.tex"), theirs + ".state"} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("rm --force deleted another state dir's worktree: %v", err)
		}
	}
	if g, err := w.Manager.Get(ctx, s.ID); !errors.Is(err, sessions.ErrNotFound) {
		t.Fatalf("the session: %v, %v", g, err)
	}
}

// A symlink where the record's worktree is, and an owner file beside it
// naming this state dir (a worker can plant both wherever it may write),
// do not make rm follow it to a worktree of yours: git removed that
// worktree, its staged work with it.
func TestASymlinkedWorktreeIsNotFollowed(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"README": "hi\n"})
	s := w.wait(w.spawnIn(w.Work, "nothing to change", sessions.SpawnRequest{}).ID)
	yours := filepath.Join(t.TempDir(), "yours")
	git(t, w.Work, "worktree", "add", "-q", yours, "-b", "feature")
	file := usersDir(t, yours)
	evil := filepath.Join(t.TempDir(), s.ID)
	if err := os.Symlink(yours, evil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(evil+".state", []byte(w.Store.Dir()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	editRecord(t, w, s.ID, func(ws map[string]any) {
		ws["path"] = evil
		delete(ws, "own_git_dir")
		delete(ws, "admin_dir")
	})
	ctx := context.Background()
	w.Manager.Remove(ctx, s.ID, false)
	w.Manager.Remove(ctx, s.ID, true)
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("rm followed the symlink to your worktree: %v", err)
	}
}

// A record whose worktree's git dir is not where git makes one is
// unreadable: zwarm removes every symlink, FIFO and device in that dir
// (what a worker may plant there), and did so in any dir a record named.
func TestARecordNamingAnotherGitDirIsRefused(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"README": "hi\n"})
	s := w.wait(w.spawnIn(w.Work, "nothing to change", sessions.SpawnRequest{}).ID)
	yours := t.TempDir()
	usersDir(t, yours)
	link := filepath.Join(yours, "link")
	if err := os.Symlink("thesis.tex", link); err != nil {
		t.Fatal(err)
	}
	editRecord(t, w, s.ID, func(ws map[string]any) { ws["admin_dir"] = yours })
	ctx := context.Background()
	if _, err := w.Manager.Remove(ctx, s.ID, false); err == nil || !strings.Contains(err.Error(), "git dir") {
		t.Errorf("rm: %v", err)
	}
	w.Manager.Remove(ctx, s.ID, true)
	if _, err := os.Lstat(link); err != nil {
		t.Fatalf("rm removed a symlink of yours: %v", err)
	}
}

// clean passes over a session whose worktree zwarm did not make for this
// state dir (it leaves it, as rm does without --force), and goes on with
// the rest: it stopped at it with an error.
func TestCleanPassesOverAWorktreeItDidNotMake(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"README": "hi\n"})
	s := w.wait(w.spawnIn(w.Work, "nothing to change", sessions.SpawnRequest{}).ID)
	other := w.wait(w.spawnIn(w.Work, "nothing either", sessions.SpawnRequest{}).ID)
	if err := os.WriteFile(s.Workspace.Path+".state", []byte(t.TempDir()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := w.Manager.Clean(context.Background(), sessions.CleanOptions{})
	if err != nil || len(res.Removed) != 1 || res.Removed[0] != other.ID {
		t.Fatalf("clean: %+v, %v", res, err)
	}
	if _, err := os.Stat(s.Workspace.Path); err != nil {
		t.Fatalf("its worktree went: %v", err)
	}
	if _, err := w.Manager.Get(context.Background(), s.ID); err != nil {
		t.Fatalf("the session went: %v", err)
	}
}

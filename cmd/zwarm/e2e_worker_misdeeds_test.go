package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/adapters/testsupport/fakemodel"
)

// Workers, the real CLIs each, that do to their worktree what a careless
// or hostile worker does: nothing zwarm lands or removes afterwards loses
// a file or a commit of yours or of theirs.
//
//   - a repository of its own inside the worktree (git init and commit in
//     app/): never landed as a link to a commit that exists nowhere else;
//     land refuses, saying what to do, and the files stay;
//   - a directory where you keep an ignored file (your notes, its
//     notes/todo.md): land refuses, your notes stay;
//   - its worktree's git dir deleted (find "$(git rev-parse --git-dir)"
//     -delete: codex refuses rm -rf):
//     its files are still seen, committed and landed.
func TestRealAgentWorkerMisdeedsLoseNothing(t *testing.T) {
	forEachAgent(t, func(t *testing.T, a agent) {
		w, srv := realWorld(t, a.name)
		w.gitEnv()
		writeFile(t, filepath.Join(w.work, "README.md"), "# api\n")
		writeFile(t, filepath.Join(w.work, ".gitignore"), "notes\n")
		w.git(w.work, "init", "-q")
		w.git(w.work, "add", "-A")
		w.git(w.work, "commit", "-q", "-m", "init")
		writeFile(t, filepath.Join(w.work, "notes"), "yours\n")
		main := w.git(w.work, "rev-parse", "main")
		unchanged := func(what string) {
			t.Helper()
			if got := w.git(w.work, "rev-parse", "main"); got != main {
				t.Fatalf("%s: main moved to %s", what, got)
			}
			if b, err := os.ReadFile(filepath.Join(w.work, "notes")); err != nil || string(b) != "yours\n" {
				t.Fatalf("%s: your ignored notes hold %q (%v)", what, b, err)
			}
			if st := w.git(w.work, "status", "--porcelain"); st != "" {
				t.Fatalf("%s: your checkout is dirty: %q", what, st)
			}
		}
		worker := func(task, script string) session {
			t.Helper()
			srv.On(task, fakemodel.Reply{Tool: a.tool, Args: a.args(script)}, fakemodel.Reply{Text: "done"})
			var s session
			mustJSON(t, w.ok("spawn", "--wait", "--json", task), &s)
			if s.Worktree == "" {
				t.Fatalf("%s: no worktree (%s)", task, s.Error)
			}
			return s
		}

		nested := worker("nest a repository", `mkdir app && cd app && git init -q && echo app > main.go && git add main.go && `+
			`git -c user.name=A -c user.email=a@x commit -qm app && echo nested-made`)
		r := w.zwarm("land", nested.ID)
		if r.code == 0 || !strings.Contains(r.stderr, "app/") || !strings.Contains(r.stderr, "repository of its own") {
			t.Fatalf("land of a change holding a repository of its own: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		unchanged("a refused nested repository")
		if b, err := os.ReadFile(filepath.Join(nested.Worktree, "app", "main.go")); err != nil || string(b) != "app\n" {
			t.Fatalf("the nested repository's file in the worktree: %q %v", b, err)
		}

		overNotes := worker("replace the notes", `mkdir -p notes && echo todo > notes/todo.md && git add -f notes/todo.md && echo notes-made`)
		r = w.zwarm("land", overNotes.ID)
		if r.code == 0 || !strings.Contains(r.stderr, "notes") {
			t.Fatalf("land over your ignored notes: exit %d\n%s%s\n%s", r.code, r.stdout, r.stderr, w.commandOutput(srv))
		}
		unchanged("a landing over your ignored notes")

		gitless := worker("lose the git dir", `echo keep > keep.txt && find "$(git rev-parse --git-dir)" -delete; echo git-dir-gone`)
		if log, _ := os.ReadFile(filepath.Join(w.state, "sessions", gitless.ID, "supervisor.log")); !strings.Contains(string(log), "the worker had deleted it") {
			t.Fatalf("the worker's deleting its git dir is not in the supervisor's log (did it delete it?):\n%s\n%s", log, w.commandOutput(srv))
		}
		if d := w.ok("diff", gitless.ID, "--name-only"); d != "keep.txt\n" {
			t.Fatalf("diff of a worker that deleted its git dir: %q, want keep.txt", d)
		}
		if r := w.zwarm("land", gitless.ID); r.code != 0 {
			t.Fatalf("land of a worker that deleted its git dir: %+v", r)
		}
		if b, err := os.ReadFile(filepath.Join(w.work, "keep.txt")); err != nil || string(b) != "keep\n" {
			t.Fatalf("keep.txt after landing: %q %v", b, err)
		}
	})
}

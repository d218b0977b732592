package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
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
//   - what the [worktrees] setup command made (build/) is not its change;
//   - commits a person makes on its branch after its turn land with it;
//   - a binary file it made is in the patch zwarm diff pipes, which git
//     apply takes whole;
//   - its worktree's git dir deleted (find "$(git rev-parse --git-dir)"
//     -delete: codex refuses rm -rf):
//     its files are still seen, committed and landed;
//   - its change landed with --verify, and land hung up mid-verify: the
//     verify's processes and edits go with it, the next land is clean;
//   - an empty .git it made above a plain directory: spawn there works;
//   - FIFOs where git opens .gitattributes and .gitignore: removed before
//     the turn's commit, which takes the rest, and shown with the turn.
func TestRealAgentWorkerMisdeedsLoseNothing(t *testing.T) {
	forEachAgent(t, func(t *testing.T, a realAgent) {
		w, srv := realRepoWorld(t, a.name)
		writeFile(t, filepath.Join(w.Work, ".gitignore"), "notes\n")
		w.git(w.Work, "add", ".gitignore")
		w.git(w.Work, "commit", "-q", "-m", "ignore notes")
		writeFile(t, filepath.Join(w.Work, "notes"), "yours\n")
		cfg, _ := os.ReadFile(filepath.Join(w.State, "config.toml"))
		writeFile(t, filepath.Join(w.State, "config.toml"), string(cfg)+"[worktrees]\nsetup = \"mkdir -p build && echo generated > build/out.txt\"\n")
		main := w.git(w.Work, "rev-parse", "main")
		unchanged := func(what string) {
			t.Helper()
			if got := w.git(w.Work, "rev-parse", "main"); got != main {
				t.Fatalf("%s: main moved to %s", what, got)
			}
			if b, err := os.ReadFile(filepath.Join(w.Work, "notes")); err != nil || string(b) != "yours\n" {
				t.Fatalf("%s: your ignored notes hold %q (%v)", what, b, err)
			}
			if st := w.git(w.Work, "status", "--porcelain"); st != "" {
				t.Fatalf("%s: your checkout is dirty: %q", what, st)
			}
		}
		worker := func(task, script string) session {
			t.Helper()
			return w.spawnWorker(srv, a, task, script)
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

		fixed := worker("add the turn file", `echo turn > turn.txt && echo turn-made`)
		writeFile(t, filepath.Join(fixed.Worktree, "fix.txt"), "by hand\n")
		w.git(fixed.Worktree, "add", "fix.txt")
		w.git(fixed.Worktree, "commit", "-q", "-m", "fix by hand")
		if d := w.ok("diff", fixed.ID, "--name-only"); d != "fix.txt\nturn.txt\n" {
			t.Fatalf("diff after a hand commit: %q, want the hand commit's file and the turn's, not what setup made", d)
		}
		if r := w.zwarm("land", fixed.ID); r.code != 0 {
			t.Fatalf("land with a hand commit: %+v", r)
		}
		if got := w.git(w.Work, "ls-files"); got != ".gitignore\nREADME.md\nfix.txt\nturn.txt" {
			t.Fatalf("your branch after landing the turn and the hand commit: %q", got)
		}
		main = w.git(w.Work, "rev-parse", "main")

		binary := worker("draw a logo", `printf 'PNG\000\001\002\377' > logo.bin && echo logo-made`)
		patch := w.ok("diff", binary.ID)
		clone := filepath.Join(t.TempDir(), "clone")
		w.git(w.Work, "clone", "-q", w.Work, clone)
		cmd := exec.Command("git", "apply")
		cmd.Dir, cmd.Env, cmd.Stdin = clone, w.env(), strings.NewReader(patch)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("zwarm diff | git apply: %v\n%s\n%s", err, out, patch)
		}
		if b, err := os.ReadFile(filepath.Join(clone, "logo.bin")); err != nil || string(b) != "PNG\x00\x01\x02\xff" {
			t.Fatalf("logo.bin as git apply made it from zwarm diff: %q %v", b, err)
		}

		gitless := worker("lose the git dir", `echo keep > keep.txt && find "$(git rev-parse --git-dir)" -delete; echo git-dir-gone`)
		if log, _ := os.ReadFile(filepath.Join(w.State, "sessions", gitless.ID, "supervisor.log")); !strings.Contains(string(log), "the worker had deleted it") {
			t.Fatalf("the worker's deleting its git dir is not in the supervisor's log (did it delete it?):\n%s\n%s", log, w.commandOutput(srv))
		}
		if d := w.ok("diff", gitless.ID, "--name-only"); d != "keep.txt\n" {
			t.Fatalf("diff of a worker that deleted its git dir: %q, want keep.txt", d)
		}
		if r := w.zwarm("land", gitless.ID); r.code != 0 {
			t.Fatalf("land of a worker that deleted its git dir: %+v", r)
		}
		if b, err := os.ReadFile(filepath.Join(w.Work, "keep.txt")); err != nil || string(b) != "keep\n" {
			t.Fatalf("keep.txt after landing: %q %v", b, err)
		}

		// FIFOs it leaves where git opens a file by name would hold every
		// git that reads the worktree: the turn's commit removes them, takes
		// the rest of the turn, and the turn says what it removed.
		piped := worker("leave pipes", `mkfifo .gitattributes && mkdir -p deep/er && mkfifo deep/er/.gitignore && echo piped > piped.txt && echo pipes-made`)
		if d := w.ok("diff", piped.ID, "--name-only"); d != "piped.txt\n" {
			t.Fatalf("diff of a worker that left FIFOs: %q, want piped.txt\n%s", d, w.commandOutput(srv))
		}
		show := w.ok("show", piped.ID)
		for _, p := range []string{".gitattributes", "deep/er/.gitignore"} {
			if !strings.Contains(show, "── zwarm removed "+filepath.Join(piped.Worktree, p)+" (a FIFO the worker left in its worktree") {
				t.Fatalf("show does not say the FIFO %s was removed:\n%s", p, show)
			}
		}
		var shown struct {
			Turns []struct {
				Undone []string `json:"undone"`
			} `json:"turns"`
		}
		mustJSON(t, w.ok("show", piped.ID, "--json"), &shown)
		if len(shown.Turns) != 1 || len(shown.Turns[0].Undone) != 2 {
			t.Fatalf("show --json: turns %+v, want one saying what was undone, twice", shown.Turns)
		}
		if r := w.zwarm("land", piped.ID); r.code != 0 {
			t.Fatalf("land of a worker that left FIFOs: %+v", r)
		}

		// A land --verify hung up (its terminal closed) mid-verify: the
		// verify's processes die with it and its edits stay in its own
		// checkout; the next landing lands the worker's change alone.
		verified := worker("add the checked file", `echo checked > checked.txt && echo checked-made`)
		head, status := w.git(verified.Worktree, "rev-parse", "HEAD"), w.git(verified.Worktree, "status", "--porcelain")
		marks := t.TempDir()
		w.LetVerifyWrite(marks) // where the verify says its pid
		pidFile := filepath.Join(marks, "verify.pid")
		land := exec.Command(bins.zwarm, "land", verified.ID, "--verify", "echo junk >> README.md; printf %s $$ > "+pidFile+"; sleep 300")
		land.Dir, land.Env = w.Work, w.env()
		if err := land.Start(); err != nil {
			t.Fatal(err)
		}
		defer land.Process.Kill() // should the test fail before it is hung up
		sessionstest.Eventually(t, "the verify to start", func() bool { _, err := os.Stat(pidFile); return err == nil })
		verifyPID := readPID(t, pidFile)
		land.Process.Signal(syscall.SIGHUP)
		if err := land.Wait(); err == nil || land.ProcessState.ExitCode() != 130 {
			t.Fatalf("land --verify hung up: %v; want exit 130, as for Ctrl-C", err)
		}
		sessionstest.Eventually(t, "the verify to die with land", func() bool { return !sessionstest.Alive(verifyPID) })
		if got, st := w.git(verified.Worktree, "rev-parse", "HEAD"), w.git(verified.Worktree, "status", "--porcelain"); got != head || st != status {
			t.Fatalf("the worker's worktree after a hung-up land: at %s (want %s), status %q (was %q)", got, head, st, status)
		}
		if r := w.zwarm("land", verified.ID, "--verify", "test -f checked.txt"); r.code != 0 {
			t.Fatalf("land --verify after the hung-up one: %+v", r)
		}
		if b, _ := os.ReadFile(filepath.Join(w.Work, "README.md")); string(b) != "# api\n" {
			t.Fatalf("README.md in your checkout after landing: %q; the verify's junk landed", b)
		}

		// An empty .git above a plain directory (codex's sandbox makes one
		// in each writable root while a command runs; any worker's shell
		// can make one): spawn there runs in place, as git says it is no
		// repository.
		scratch := t.TempDir()
		worker("mask a directory", fmt.Sprintf(`mkdir -p %s/.git %s/plain && echo masked`, scratch, scratch))
		if fi, err := os.Stat(filepath.Join(scratch, ".git")); err != nil || !fi.IsDir() {
			t.Fatalf("the worker made no empty .git in %s (%v):\n%s", scratch, err, w.commandOutput(srv))
		}
		srv.On("work in the plain dir", fakemodel.Reply{Text: "nothing to do"})
		var plain session
		spawn := exec.Command(bins.zwarm, "spawn", "--wait", "--json", "work in the plain dir")
		spawn.Dir, spawn.Env = filepath.Join(scratch, "plain"), w.env()
		out, err := spawn.Output()
		if err != nil {
			t.Fatalf("spawn below an empty .git: %v\n%s", err, out)
		}
		mustJSON(t, string(out), &plain)
		if plain.Status() != record.StatusCompleted || plain.Worktree != "" {
			t.Fatalf("spawn below an empty .git: status %s (%s), worktree %q; want it completed in place", plain.Status(), plain.Error, plain.Worktree)
		}
	})
}

// spawnWorker has the real agent a run script with its shell tool for
// task, in a worktree, and waits for it to settle.
func (w *world) spawnWorker(srv *fakemodel.Server, a realAgent, task, script string) session {
	w.t.Helper()
	srv.On(task, fakemodel.Reply{Tool: a.tool, Args: a.args(script)}, fakemodel.Reply{Text: "done"})
	var s session
	mustJSON(w.t, w.ok("spawn", "--wait", "--json", task), &s)
	if s.Worktree == "" {
		w.t.Fatalf("%s: no worktree (%s)", task, s.Error)
	}
	return s
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// The real agent CLIs in worktrees of their own: only the model is fake.

// realRepoWorld is a realWorld whose working dir is a git repository.
func realRepoWorld(t *testing.T, adapter string) (*world, *fakemodel.Server) {
	t.Helper()
	w, srv := realWorld(t, adapter)
	w.initRepo(map[string]string{"README.md": "# api\n"})
	return w, srv
}

// Codex under workspace-write may write its worktree and, through the
// git dirs zwarm names as writable roots, commit there with its own git;
// nothing else of the repository is writable to it (/tmp, where the test
// lives, is taken out of its sandbox). Its commit lands.
func TestRealCodexCommitsInItsWorktreeUnderWorkspaceWrite(t *testing.T) {
	t.Parallel()
	w, srv := realRepoWorld(t, "codex")
	w.codexOutOfTmp()
	outside := filepath.Join(w.Work, "outside.txt")
	script := fmt.Sprintf(`echo hello > made.txt && git add made.txt && git commit -q -m "made by codex" && echo committed; `+
		`echo sneaky > %s 2>/dev/null || echo "main checkout is read-only"; `+
		`git update-ref refs/heads/sneaky HEAD 2>/dev/null || echo "other branches are read-only"; `+
		`git tag sneaky 2>/dev/null || echo "tags are read-only"; `+
		`git config core.hooksPath /nowhere 2>/dev/null || echo "config is read-only"`, outside)
	srv.On("make and commit",
		fakemodel.Reply{Tool: "exec_command", Args: fmt.Sprintf(`{"cmd":%q}`, script)},
		fakemodel.Reply{Text: "committed made.txt"})
	var s session
	mustJSON(t, w.ok("spawn", "--wait", "--json", "--sandbox", "workspace-write", "make and commit"), &s)
	if s.Status() != record.StatusCompleted || s.Worktree == "" {
		t.Fatalf("status %s (%s), worktree %q", s.Status(), s.Error, s.Worktree)
	}
	out := w.commandOutput(srv)
	for _, want := range []string{"committed", "main checkout is read-only", "other branches are read-only", "tags are read-only", "config is read-only"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the command's output, as codex returned it to the model, lacks %q:\n%s", want, out)
		}
	}
	if refs := w.git(w.Work, "for-each-ref", "--format=%(refname)", "refs/tags", "refs/heads/sneaky"); refs != "" {
		t.Fatalf("the worker made %q", refs)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatal("the worker wrote into the main checkout")
	}
	if got := w.git(s.Worktree, "log", "--format=%an|%s", "-2"); !strings.HasPrefix(got, "Test User|made by codex") {
		t.Fatalf("the worktree's log: %q (the worker's own commit first)", got)
	}
	if d := w.ok("diff", s.ID, "--name-only"); d != "made.txt\n" {
		t.Fatalf("diff: %q", d)
	}
	if r := w.zwarm("land", s.ID); r.code != 0 || !strings.Contains(r.stdout, "landed ") {
		t.Fatalf("land: %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(w.Work, "made.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("made.txt in the main checkout after landing: %q %v", b, err)
	}
}

// A worker in codex's workspace-write sandbox may write its own branch's
// ref and the zwarm branches' logs (its own git needs them to commit).
// What it plants there, a symbolic ref to main and a reflog symlinked to
// a file of yours, must not steer zwarm's own git, which commits the
// turn outside the sandbox: main stays, your file stays, and the turn's
// work is on the worker's branch.
func TestRealCodexWorkerCannotMoveMainThroughItsBranch(t *testing.T) {
	t.Parallel()
	w, srv := realRepoWorld(t, "codex")
	main := w.git(w.Work, "rev-parse", "main")
	victim := filepath.Join(t.TempDir(), "yours.txt")
	writeFile(t, victim, "yours\n")
	script := fmt.Sprintf(`echo work > work.txt; common=$(git rev-parse --path-format=absolute --git-common-dir); b=$(git symbolic-ref --short HEAD); `+
		`printf 'ref: refs/heads/main\n' > "$common/refs/heads/$b" && echo sym''ref-planted; `+
		`ln -sfn %s "$common/logs/refs/heads/$b" && echo link''-planted`, victim)
	srv.On("plant", fakemodel.Reply{Tool: "exec_command", Args: fmt.Sprintf(`{"cmd":%q}`, script)}, fakemodel.Reply{Text: "done"})
	var s session
	mustJSON(t, w.ok("spawn", "--wait", "--json", "--sandbox", "workspace-write", "plant"), &s)
	out := w.commandOutput(srv)
	for _, want := range []string{"symref-planted", "link-planted"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the sandboxed command could not plant what this test is about (%q missing); its output:\n%s", want, out)
		}
	}
	if s.Status() != record.StatusCompleted {
		t.Fatalf("status %s (%s)", s.Status(), s.Error)
	}
	if got := w.git(w.Work, "rev-parse", "main"); got != main {
		t.Fatalf("main moved from %s to %s: zwarm's commit followed the worker's symbolic ref", main, got)
	}
	if b, _ := os.ReadFile(victim); string(b) != "yours\n" {
		t.Fatalf("your file, which the worker symlinked its branch's reflog to, now holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Work, ".git", "refs", "heads", "zwarm", s.ID)); strings.HasPrefix(string(b), "ref:") {
		t.Fatalf("the worker's branch is still a symbolic ref: %q", b)
	}
	if d := w.ok("diff", s.ID, "--name-only"); d != "work.txt\n" {
		log, _ := os.ReadFile(filepath.Join(w.State, "sessions", s.ID, "supervisor.log"))
		t.Fatalf("diff: %q, want the turn's work.txt\n%s\n%s\n%s", d, log, out, w.git(s.Worktree, "status", "--short"))
	}
}

// codexOutOfTmp keeps codex's workspace-write sandbox from writing /tmp
// and $TMPDIR, which it leaves writable unless told not to: the test's
// repositories and worktrees are there, and only what zwarm names as
// writable roots may be writable to the worker.
func (w *world) codexOutOfTmp() {
	codexTOML, _ := os.ReadFile(filepath.Join(w.State, "codex.toml"))
	writeFile(w.t, filepath.Join(w.State, "codex.toml"), string(codexTOML)+`
[sandbox_workspace_write]
exclude_slash_tmp = true
exclude_tmpdir_env_var = true
`)
}

// commandOutput is what codex sent back to the model as its command's
// output (the function_call_output of its last request).
func (w *world) commandOutput(srv *fakemodel.Server) string {
	reqs := srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		body := string(reqs[i].Body)
		if j := strings.Index(body, `"function_call_output"`); j >= 0 {
			return body[j:min(len(body), j+2000)]
		}
	}
	return ""
}

// Claude in a worktree runs commands by default (acceptEdits alone
// refuses them), and a call its permissions refuse, in a mode the user
// chose, is shown, never silent.
func TestRealClaudeRunsCommandsInItsWorktreeAndDenialsShow(t *testing.T) {
	t.Parallel()
	w, srv := realRepoWorld(t, "claude")
	w.gitEnv()
	// The test's config runs claude with every permission; these take the
	// worktree's defaults.
	writeFile(t, filepath.Join(w.State, "config.toml"), "default_adapter = \"claude\"\nkill_grace = \"2s\"\n")
	srv.On("count files",
		fakemodel.Reply{Tool: "Bash", Args: `{"command":"python3 -c 'print(40+2)' > answer.txt; cat answer.txt"}`},
		fakemodel.Reply{Text: "wrote the answer"})
	var s session
	mustJSON(t, w.ok("spawn", "--wait", "--json", "count files"), &s)
	if s.Status() != record.StatusCompleted || s.Denied != 0 {
		t.Fatalf("status %s, denied %d", s.Status(), s.Denied)
	}
	if b, err := os.ReadFile(filepath.Join(s.Worktree, "answer.txt")); err != nil || string(b) != "42\n" {
		t.Fatalf("the command did not run in the worktree: %q %v", b, err)
	}
	if d := w.ok("diff", s.ID, "--name-only"); d != "answer.txt\n" {
		t.Fatalf("diff: %q", d)
	}

	srv.On("in the default mode",
		fakemodel.Reply{Tool: "Bash", Args: `{"command":"python3 -c 'print(1)'"}`},
		fakemodel.Reply{Text: "could not run it"})
	mustJSON(t, w.ok("spawn", "--wait", "--json", "--sandbox", "default", "in the default mode"), &s)
	if s.Denied != 1 || s.Turns[0].Denied != 1 {
		t.Fatalf("denied %d (turn %d): a refused call must be counted", s.Denied, s.Turns[0].Denied)
	}
	if out, _ := w.onTerminal(120, nil, "", "ls"); !strings.Contains(visible(out), record.ShortID(s.ID)+"  completed*!, 1 call denied") {
		t.Errorf("ls on a terminal:\n%s", visible(out))
	}
	if out := w.ok("show", s.ID); !strings.Contains(out, "1 tool call refused by the agent's permissions: Bash python3") || !strings.Contains(out, "--allowedTools") {
		t.Errorf("show:\n%s", out)
	}
}

// A role's sandbox means the same with claude as with codex: a read-only
// reviewer reads, has no tool to edit with (claude answers the call with
// an error) and is refused, never asked, a command, which is counted.
func TestRealClaudeReadOnlyRole(t *testing.T) {
	t.Parallel()
	w, srv := realWorld(t, "claude")
	writeFile(t, filepath.Join(w.State, "config.toml"), "default_adapter = \"claude\"\nkill_grace = \"2s\"\n"+
		"[roles.reviewer]\nsandbox = \"read-only\"\ninstructions = \"Review; change no file.\"\n")
	writeFile(t, filepath.Join(w.Work, "notes.txt"), "the secret is 4242\n")
	srv.On("review the notes",
		fakemodel.Reply{Tool: "Read", Args: fmt.Sprintf(`{"file_path":%q}`, filepath.Join(w.Work, "notes.txt"))},
		fakemodel.Reply{Tool: "Write", Args: fmt.Sprintf(`{"file_path":%q,"content":"x"}`, filepath.Join(w.Work, "edited.txt"))},
		fakemodel.Reply{Tool: "Bash", Args: `{"command":"touch ran.txt"}`},
		fakemodel.Reply{Text: "reviewed"})
	var s session
	mustJSON(t, w.ok("spawn", "--role", "reviewer", "--wait", "--json", "review the notes"), &s)
	if s.Status() != record.StatusCompleted || s.Denied != 1 {
		t.Fatalf("status %s (%s), denied %d; want completed with the edit and the command refused\n%s", s.Status(), s.Error, s.Denied, w.ok("show", s.ID))
	}
	for _, f := range []string{"edited.txt", "ran.txt"} {
		if _, err := os.Stat(filepath.Join(w.Work, f)); err == nil {
			t.Errorf("the read-only worker made %s", f)
		}
	}
	read := false
	for _, r := range srv.Requests() {
		read = read || strings.Contains(string(r.Body), "the secret is 4242")
	}
	if !read {
		t.Errorf("the file read never reached the model")
	}
}

// A worker in codex's workspace-write sandbox writes the objects and
// branches of a repository made for it alone: your objects, which its
// repository borrows, and the repository of another worker are out of
// its reach. It tries to delete your objects and to move the other
// worker's branch and yours; your repository stays whole, the other
// worker's work stays where it was, and its own work still lands.
func TestRealCodexWorkerCannotCorruptYourRepositoryOrAnotherWorkers(t *testing.T) {
	t.Parallel()
	w, srv := realRepoWorld(t, "codex")
	w.codexOutOfTmp()
	main := w.git(w.Work, "rev-parse", "main")
	srv.On("the other worker", fakemodel.Reply{Tool: "exec_command", Args: `{"cmd":"echo other > other.txt"}`}, fakemodel.Reply{Text: "done"})
	var other session
	mustJSON(t, w.ok("spawn", "--wait", "--json", "--sandbox", "workspace-write", "the other worker"), &other)
	if other.Status() != record.StatusCompleted {
		t.Fatalf("the other worker: status %s (%s)", other.Status(), other.Error)
	}
	otherTip := w.git(w.Work, "rev-parse", "zwarm/"+other.ID)
	yours := filepath.Join(w.Work, ".git")
	objects := strings.Fields(w.git(w.Work, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"))

	// Where your objects and every branch but its own are: a worker can
	// read them all (its sandbox limits writes, not reads).
	refs := []string{filepath.Join(yours, "refs", "heads", "main"), filepath.Join(yours, "refs", "heads", "zwarm", other.ID),
		filepath.Join(other.Worktree+".git", "refs", "heads", "zwarm", other.ID)}
	script := fmt.Sprintf(`echo work > work.txt; find %[1]s -type f -delete 2>/dev/null; echo "left-$(find %[1]s -type f | wc -l)-files"; `+
		`for f in %[2]s; do [ -e "$f" ] || continue; printf 'ref: refs/heads/main\n' > "$f" 2>/dev/null && echo "wrote $f"; done; echo refs''-tried`,
		filepath.Join(yours, "objects"), strings.Join(refs, " "))
	srv.On("wreck", fakemodel.Reply{Tool: "exec_command", Args: fmt.Sprintf(`{"cmd":%q}`, script)}, fakemodel.Reply{Text: "done"})
	var s session
	mustJSON(t, w.ok("spawn", "--wait", "--json", "--sandbox", "workspace-write", "wreck"), &s)
	out := w.commandOutput(srv)
	if !strings.Contains(out, "-files") || !strings.Contains(out, "refs-tried") {
		t.Fatalf("the sandboxed command did not get to try; its output:\n%s", out)
	}
	if strings.Contains(out, "left-0-files") || strings.Contains(out, "wrote ") {
		t.Fatalf("the sandboxed worker deleted your objects or wrote a ref outside its repository; its output:\n%s", out)
	}
	if s.Status() != record.StatusCompleted {
		t.Fatalf("status %s (%s)", s.Status(), s.Error)
	}
	// zwarm adds the worker's commits; none of yours may be gone.
	after := w.git(w.Work, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
	for _, o := range objects {
		if !strings.Contains(after, o) {
			t.Fatalf("your object %s is gone after the worker's turn (%d objects before, now %q)", o, len(objects), after)
		}
	}
	w.git(w.Work, "fsck", "--connectivity-only", "--no-dangling")
	if got := w.git(w.Work, "rev-parse", "main"); got != main {
		t.Fatalf("main moved from %s to %s", main, got)
	}
	if got := w.git(w.Work, "rev-parse", "zwarm/"+other.ID); got != otherTip {
		t.Fatalf("the other worker's branch moved from %s to %s", otherTip, got)
	}
	if got := w.git(other.Worktree, "rev-parse", "HEAD"); got != otherTip {
		t.Fatalf("the other worker's own repository has its branch at %s, want %s", got, otherTip)
	}
	if d := w.ok("diff", s.ID, "--name-only"); d != "work.txt\n" {
		t.Fatalf("diff: %q, want the turn's work.txt", d)
	}
	for _, id := range []string{s.ID, other.ID} {
		if r := w.zwarm("land", id); r.code != 0 {
			t.Fatalf("land %s: %+v", id, r)
		}
	}
	if got := w.git(w.Work, "ls-files"); got != "README.md\nother.txt\nwork.txt" {
		t.Fatalf("your checkout after landing both: %q", got)
	}
	// Landed, each worker's worktree goes with its repository, and its
	// commits stay only where they landed.
	for _, wt := range []string{s.Worktree, other.Worktree} {
		for _, p := range []string{wt, wt + ".git"} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("%s is still there after landing: %v", p, err)
			}
		}
	}
	if refs := w.git(w.Work, "for-each-ref", "refs/zwarm/", "refs/heads/zwarm/"); refs != "" {
		t.Errorf("zwarm's refs of landed workers are left: %q", refs)
	}
}

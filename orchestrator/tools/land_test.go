package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/watch"
)

// These tests run workers in real git repositories (testenv's Repo): each
// worker edits files in its own worktree with a shell step, and zwarm
// commits, diffs and lands them with git.

func newRepoFixture(t *testing.T, files map[string]string) *fixture {
	t.Helper()
	f := newFixture(t, 0)
	f.w.Repo(files)
	return f
}

// edits is a worker that runs a shell command in its working dir, then
// says msg.
func edits(shell, msg string) []fakeagent.Step {
	return append([]fakeagent.Step{fakeagent.Run(shell)}, fakeagent.Completes(msg, 100)...)
}

func (f *fixture) waitAll(ids ...string) {
	f.t.Helper()
	var wr waitResult
	f.mustOK("wait", map[string]any{"session_ids": ids, "mode": "all"}, &wr)
	if len(wr.Finished) != len(ids) || wr.TimedOut {
		f.t.Fatalf("wait: %+v", wr)
	}
}

// worktreeReady waits until a worker's worktree is made: the worker runs
// in it from then on (delegate returns while it is being made).
func (f *fixture) worktreeReady(id string) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sub, err := f.w.Manager.Subscribe(ctx, watch.SubscribeOptions{IDs: []string{id}})
	if err != nil {
		f.t.Fatal(err)
	}
	defer sub.Close()
	for u := range sub.C() {
		if s := u.Session; s != nil && s.Workspace != nil && s.Workspace.State == record.WorkspaceReady {
			return
		}
	}
	f.t.Fatalf("worker %s: its worktree was never made (%v)", record.ShortID(id), sub.Err())
}

func (f *fixture) mustFail(name string, args any, wants ...string) string {
	f.t.Helper()
	res := f.call(name, args, nil)
	if !res.IsError {
		f.t.Fatalf("%s(%v) did not fail: %s", name, args, res.Text)
	}
	for _, w := range wants {
		if !strings.Contains(res.Text, w) {
			f.t.Errorf("%s(%v): %q lacks %q", name, args, res.Text, w)
		}
	}
	return res.Text
}

type landOut struct {
	Landed  bool   `json:"landed"`
	Already bool   `json:"already"`
	Nothing bool   `json:"nothing"`
	Into    string `json:"into"`
	Commit  string `json:"commit"`
	Changes string `json:"changes"`
	Files   []struct {
		Path  string `json:"path"`
		Added int    `json:"added"`
	} `json:"files"`
	Removed  bool   `json:"worktree_removed"`
	Verified bool   `json:"verified"`
	Note     string `json:"note"`
}

// A model runs the verified merge queue as the command line does: verify
// on exactly what would land (a failure lands nothing and returns the
// output's end), a time limit, and a branch of its choosing.
func TestAModelLandsOnlyWhatPassesVerify(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t, map[string]string{"a.txt": "a\n"})
	f.w.Git("branch", "release")
	f.w.Script(map[string][]fakeagent.Step{"add good": edits("echo good > good.txt", "added"), "add bad": edits("echo bad > bad.txt", "added")})
	good, bad := f.delegate("add good"), f.delegate("add bad")
	f.waitAll(good, bad)
	before := f.w.Git("rev-parse", "main")
	f.mustFail("land_session", map[string]any{"session_id": bad, "verify": "echo checking; test ! -f bad.txt"},
		"refused: verify", "failed with exit code 1", "nothing was landed", "checking")
	f.mustFail("land_session", map[string]any{"session_id": bad, "verify": "sleep 30", "verify_timeout_seconds": 1},
		"did not finish within 1s", "verify_timeout_seconds sets the limit")
	// 0 is no limit of a second: refused, as -1 is, not taken for the default.
	for _, n := range []int{0, -1} {
		f.mustFail("land_session", map[string]any{"session_id": bad, "verify": "true", "verify_timeout_seconds": n},
			"verify_timeout_seconds must be more than 0", "leave it out for the default")
	}
	if got := f.w.Git("rev-parse", "main"); got != before {
		t.Fatal("main moved though verify failed")
	}
	var l landOut
	f.mustOK("land_session", map[string]any{"session_id": good, "verify": "test -f good.txt", "into": "release"}, &l)
	if !l.Landed || !l.Verified || l.Into != "release" || !strings.Contains(l.Note, "verified before it landed") {
		t.Fatalf("land with verify into release: %+v", l)
	}
	if f.w.Git("rev-parse", "release") != l.Commit || f.w.Git("rev-parse", "main") != before {
		t.Fatal("the landing did not go to release alone")
	}
}

func TestDiffAndLandAWorkerOfAGitRepo(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t, map[string]string{"README": "hi\n"})
	gate := filepath.Join(t.TempDir(), "gate")
	f.w.Script(map[string][]fakeagent.Step{
		"add alpha": edits(`printf 'alpha\n' > alpha.txt`, "alpha added"),
		"slow":      append([]fakeagent.Step{fakeagent.WaitFile(gate)}, edits(`printf 'slow\n' > slow.txt`, "slow done")...),
	})
	var d struct {
		SessionID string `json:"session_id"`
		Isolation string `json:"isolation"`
		Branch    string `json:"branch"`
		Worktree  string `json:"worktree"`
		Note      string `json:"note"`
	}
	f.mustOK("delegate", map[string]any{"task": "add alpha"}, &d)
	if d.Isolation != "worktree" || d.Branch != "zwarm/"+d.SessionID || d.Worktree == "" ||
		!strings.Contains(d.Note, "reach "+f.w.Work+" only when they are landed") {
		t.Fatalf("delegate in a repository: %+v", d)
	}
	alpha := d.SessionID
	slow := f.delegate("slow")
	f.waitAll(alpha)

	stat := f.mustOK("diff_session", map[string]any{"session_id": alpha, "stat": true}, nil).Text
	mustHave(t, "the diffstat", stat, "worker "+alpha+" · completed · branch zwarm/"+alpha+" from main", "+1 -0 in 1 file · not landed",
		"alpha.txt | 1 +", "1 file changed, 1 insertion(+)")
	patch := f.mustOK("diff_session", map[string]any{"session_id": alpha[:8]}, nil).Text
	mustHave(t, "the patch", patch, "diff --git a/alpha.txt b/alpha.txt", "new file mode", "+alpha")
	if strings.Contains(patch, "left out") {
		t.Errorf("a small patch was cut:\n%s", patch)
	}
	if _, err := os.Stat(filepath.Join(f.w.Work, "alpha.txt")); !os.IsNotExist(err) {
		t.Fatal("the worker's file is in the run's checkout before any landing")
	}

	// A running worker is refused, with what to do instead.
	f.worktreeReady(slow)
	f.mustFail("land_session", map[string]any{"session_id": slow}, "refused: worker "+record.ShortID(slow)+" is still running",
		"wait for it (wait) or stop it (end_session)")
	f.mustFail("land_session", map[string]any{"session_id": alpha, "strategy": "octopus"}, "strategy", "octopus")

	var l landOut
	f.mustOK("land_session", map[string]any{"session_id": alpha}, &l)
	if !l.Landed || l.Into != "main" || l.Commit == "" || l.Changes != "+1 -0 in 1 file" || len(l.Files) != 1 || l.Files[0].Path != "alpha.txt" ||
		!l.Removed || l.Verified || !strings.Contains(l.Note, "main now has the change as commit") || !strings.Contains(l.Note, "not verified, so verify it in "+f.w.Work) {
		t.Fatalf("land: %+v", l)
	}
	if got, err := os.ReadFile(filepath.Join(f.w.Work, "alpha.txt")); err != nil || string(got) != "alpha\n" {
		t.Fatalf("the checkout after landing: %q %v", got, err)
	}
	if head := f.w.Git("rev-parse", "HEAD"); head != l.Commit {
		t.Errorf("main is at %s, the landing said %s", head, l.Commit)
	}
	if msg := f.w.Git("log", "-1", "--format=%s"); msg != "add alpha" {
		t.Errorf("the squash commit's subject is %q", msg)
	}
	if st := f.w.Git("status", "--porcelain"); st != "" {
		t.Errorf("the checkout is not clean after landing: %q", st)
	}

	// Landing again changes nothing; the diff still shows what landed.
	f.mustOK("land_session", map[string]any{"session_id": alpha}, &l)
	if l.Landed || !l.Already || !strings.Contains(l.Note, "landed into main as "+l.Commit[:12]+" before") {
		t.Errorf("land again: %+v", l)
	}
	mustHave(t, "the diff of a landed worker", f.mustOK("diff_session", map[string]any{"session_id": alpha}, nil).Text,
		"landed into main as "+l.Commit[:12], "+alpha")
	var check struct {
		Changes    string `json:"changes"`
		Branch     string `json:"branch"`
		LandedInto string `json:"landed_into"`
	}
	f.mustOK("check_session", map[string]any{"session_id": alpha}, &check)
	if check.Changes != "landed" || check.LandedInto != "main" || check.Branch != "zwarm/"+alpha {
		t.Errorf("check_session after landing: %+v", check)
	}
	os.WriteFile(gate, nil, 0o600)
	f.waitAll(slow)
}

// A conflict is refused naming the files; update_session merges the
// branch in and has the worker resolve it; a branch with markers left is
// refused too; once resolved, it lands.
func TestLandConflictUpdateAndResolve(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t, map[string]string{"conf.txt": "port = 80\n"})
	f.w.Script(map[string][]fakeagent.Step{
		"use 8080":                    edits(`printf 'port = 8080\n' > conf.txt`, "8080"),
		"use 9090":                    edits(`printf 'port = 9090\n' > conf.txt`, "9090"),
		"keep 9090, drop the markers": edits(`printf 'port = 9090\n' > conf.txt`, "resolved"),
	})
	a, b := f.delegate("use 8080"), f.delegate("use 9090")
	f.waitAll(a, b)
	var l landOut
	f.mustOK("land_session", map[string]any{"session_id": a}, &l)
	before := f.w.Git("rev-parse", "HEAD")
	f.mustFail("land_session", map[string]any{"session_id": b},
		"refused: worker "+record.ShortID(b)+"'s change conflicts with main in conf.txt; nothing was changed",
		"update_session merges main into the worker's branch")
	if after := f.w.Git("rev-parse", "HEAD"); after != before {
		t.Fatal("a refused landing moved the branch")
	}
	var list struct {
		Workers []struct {
			SessionID string `json:"session_id"`
			Changes   string `json:"changes"`
		} `json:"workers"`
	}
	f.mustOK("list_sessions", map[string]any{}, &list)
	if len(list.Workers) != 2 || list.Workers[0].SessionID != b || list.Workers[0].Changes != "conflict" || list.Workers[1].Changes != "landed" {
		t.Errorf("list after the conflict: %+v", list)
	}

	var u struct {
		From     string   `json:"from"`
		Conflict []string `json:"conflict"`
		Note     string   `json:"note"`
	}
	f.mustOK("update_session", map[string]any{"session_id": b}, &u)
	if u.From != "main" || len(u.Conflict) != 1 || u.Conflict[0] != "conf.txt" || !strings.Contains(u.Note, "the worker was asked to resolve them, as turn 2") {
		t.Fatalf("update: %+v", u)
	}
	// The scripted worker's turn 2 ignores the request: the markers stay.
	f.waitAll(b)
	f.mustFail("land_session", map[string]any{"session_id": b}, "still holds conflict markers from update_session in conf.txt",
		"Ask the worker to resolve them (converse)")

	f.mustOK("converse", map[string]any{"session_id": b, "message": "keep 9090, drop the markers"}, nil)
	f.waitAll(b)
	f.mustOK("land_session", map[string]any{"session_id": b}, &l)
	if !l.Landed {
		t.Fatalf("land after resolving: %+v", l)
	}
	if got, _ := os.ReadFile(filepath.Join(f.w.Work, "conf.txt")); string(got) != "port = 9090\n" {
		t.Errorf("conf.txt after both landings: %q", got)
	}
}

// Uncommitted changes the landing would overwrite are refused and kept; a
// worker in place has nothing to diff or land; a worktree needs a repo.
func TestLandRefusalsInPlaceAndDirty(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t, map[string]string{"README": "hi\n"})
	f.w.Script(map[string][]fakeagent.Step{
		"edit the readme": edits(`printf 'hello\n' > README`, "edited"),
		"in place":        edits(`printf 'here\n' > here.txt`, "done here"),
		"generate":        edits(`seq 1 20000 > big.txt; echo small > small.txt`, "generated"),
	})
	gen := f.delegate("generate")
	f.waitAll(gen)
	s, err := f.w.Manager.Get(context.Background(), gen)
	if err != nil {
		t.Fatal(err)
	}
	got := f.mustOK("diff_session", map[string]any{"session_id": gen}, nil).Text
	mustHave(t, "a large diff", got, "+small", "1 file left out to keep this answer under 30000 bytes: big.txt (+20000 -0)",
		"git -C "+s.Workspace.Path+" diff "+s.Workspace.BaseCommit[:12]+" -- PATH")
	if len(got) > diffPatchBytes+2000 {
		t.Errorf("diff_session answered %d bytes", len(got))
	}

	id := f.delegate("edit the readme")
	f.waitAll(id)
	os.WriteFile(filepath.Join(f.w.Work, "README"), []byte("mine, uncommitted\n"), 0o644)
	f.mustFail("land_session", map[string]any{"session_id": id}, "has uncommitted changes to README, which landing worker "+record.ShortID(id)+" would overwrite",
		"nothing was changed and they are intact", "do not discard them")
	if got, _ := os.ReadFile(filepath.Join(f.w.Work, "README")); string(got) != "mine, uncommitted\n" {
		t.Errorf("the uncommitted change was touched: %q", got)
	}

	var d struct {
		SessionID  string `json:"session_id"`
		Isolation  string `json:"isolation"`
		WorkingDir string `json:"working_dir"`
	}
	f.mustOK("delegate", map[string]any{"task": "in place", "isolation": "none"}, &d)
	if d.Isolation != "none" || d.WorkingDir != f.w.Work {
		t.Fatalf("delegate in place: %+v", d)
	}
	f.waitAll(d.SessionID)
	if _, err := os.Stat(filepath.Join(f.w.Work, "here.txt")); err != nil {
		t.Errorf("the worker in place did not work in the checkout: %v", err)
	}
	f.mustFail("diff_session", map[string]any{"session_id": d.SessionID}, "works in place, in "+f.w.Work, "git status and git diff there")
	f.mustFail("land_session", map[string]any{"session_id": d.SessionID}, "worked in place", "nothing to land")
	f.mustFail("update_session", map[string]any{"session_id": d.SessionID}, "works in place")
	f.mustFail("delegate", map[string]any{"task": "x", "isolation": "container"}, `refused: isolation "container": want "worktree" or "none"`)
}

// Workers delegated one right after the other each get their worktree,
// made while the others' are (git fails one of two concurrent worktree
// adds now and then; the session core serializes them).
func TestDelegatesInARowEachGetAWorktree(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t, map[string]string{"README": "hi\n"})
	var ids []string
	made := 0
	for i := 0; i < 6; i++ {
		var d struct {
			SessionID string `json:"session_id"`
			Worktree  string `json:"worktree"`
		}
		f.mustOK("delegate", map[string]any{"task": fmt.Sprintf("task %d", i)}, &d)
		if d.Worktree != "new" && d.Worktree != "preparing" {
			made++
		}
		ids = append(ids, d.SessionID)
	}
	// The worktrees are made in the background: on a busy machine one may
	// be ready by the time its delegate returns, but not every one.
	if made == len(ids) {
		t.Errorf("every delegate returned with its worktree made: delegate waited for them")
	}
	var wr waitResult
	f.mustOK("wait", map[string]any{"session_ids": ids, "mode": "all"}, &wr)
	for _, fin := range wr.Finished {
		if fin.Status != "completed" {
			t.Errorf("worker %s %s: %s", fin.SessionID, fin.Status, fin.Error)
		}
	}
}

func TestDelegateAskingForAWorktreeOutsideARepo(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	f.mustFail("delegate", map[string]any{"task": "x", "isolation": "worktree"}, "refused:", "not in a git repository", "a worktree needs one")
	var d struct {
		Isolation string `json:"isolation"`
	}
	f.mustOK("delegate", map[string]any{"task": "y"}, &d)
	if d.Isolation != "none" {
		t.Errorf("outside a repository a worker works in place: %+v", d)
	}
}

func mustHave(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

func TestDiffAndLandAnUnknownWorker(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	for _, tool := range []string{"diff_session", "land_session", "update_session"} {
		f.mustFail(tool, map[string]any{"session_id": "0123abcd"}, `no worker "0123abcd"`)
	}
}

// end_session with delete keeps a worker's work never landed, and says
// what to do with the tools the model has: it has no --force, and a tool
// never drops work.
func TestEndSessionKeepsWorkNeverLanded(t *testing.T) {
	t.Parallel()
	f := newRepoFixture(t, map[string]string{"README": "hi\n"})
	f.w.Script(map[string][]fakeagent.Step{"add alpha": edits(`printf 'alpha\n' > alpha.txt`, "alpha added")})
	id := f.delegate("add alpha")
	f.waitAll(id)
	text := f.mustFail("end_session", map[string]any{"session_id": id, "delete": true},
		"its record was not deleted", "never landed", "land_session", "diff_session")
	if strings.Contains(text, "--force") && !strings.Contains(text, "zwarm rm --force") || strings.Contains(text, "zwarm land") {
		t.Errorf("end_session's refusal names commands the model cannot run: %s", text)
	}
	if _, err := f.w.Manager.Get(context.Background(), id); err != nil {
		t.Fatalf("the worker's record is gone: %v", err)
	}
}

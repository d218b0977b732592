package sessions_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// These tests run workers in real git repositories: the fake agent runs
// a shell script of the test's (agent.sh, in the state dir) in its
// working directory at every turn, as an agent would edit files there.

// repoWorld is a world whose working dir is a git repository (on branch
// main, with one commit), with git's user config out of the way (TestMain
// sets it, see setEnv).
func repoWorld(t *testing.T, files map[string]string) *world {
	t.Helper()
	w := newWorld(t)
	git(t, w.Work, "init", "-q")
	for name, body := range files {
		writeFile(t, filepath.Join(w.Work, name), body)
	}
	git(t, w.Work, "add", "-A")
	git(t, w.Work, "commit", "-q", "-m", "init")
	w.SetScript(fakeagent.Script{Default: append([]map[string]any{{"run": "sh " + filepath.Join(w.Store.Dir(), "agent.sh")}}, fakeagent.Completes("done", 700)...)})
	w.agent("true")
	return w
}

// agent sets what the fake agent does at its next turns.
func (w *world) agent(script string) {
	w.T.Helper()
	if err := os.WriteFile(filepath.Join(w.Store.Dir(), "agent.sh"), []byte(script+"\n"), 0o600); err != nil {
		w.T.Fatal(err)
	}
}

func (w *world) spawnIn(dir, task string, req sessions.SpawnRequest) *record.Session {
	w.T.Helper()
	req.Task, req.Adapter, req.WorkingDir = task, "fake", dir
	s, err := w.Manager.Spawn(context.Background(), req)
	if err != nil {
		w.T.Fatal(err)
	}
	return s
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t testing.TB, path, body string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (w *world) diff(id string, req sessions.DiffRequest) string {
	w.T.Helper()
	var b bytes.Buffer
	if _, err := w.Manager.Diff(context.Background(), id, &b, req); err != nil {
		w.T.Fatalf("diff %s: %v", record.ShortID(id), err)
	}
	return b.String()
}

func TestAWorkerInARepoWorksInItsOwnWorktreeAndEachTurnIsCommitted(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"api/server.go": "package api\n", "README": "hi\n"})
	w.agent(`pwd > ../cwd.txt; printf 'package api\n\nvar Limit = 10\n' > limit.go`)
	s := w.spawnIn(filepath.Join(w.Work, "api"), "add rate limiting\nwith a token bucket", sessions.SpawnRequest{})
	ws := s.Workspace
	if ws == nil || !ws.Preparing() || ws.Branch != "zwarm/"+s.ID || ws.Base != "main" || ws.Subdir != "api" || ws.Origin != w.Work {
		t.Fatalf("workspace %+v", ws)
	}
	if !strings.HasPrefix(ws.Path, filepath.Join(os.Getenv("XDG_DATA_HOME"), "zwarm", "worktrees", "work-")) || s.WorkingDir != filepath.Join(ws.Path, "api") {
		t.Fatalf("worktree at %s, agent in %s", ws.Path, s.WorkingDir)
	}
	s = w.wait(s.ID)
	if s.Status() != record.StatusCompleted || s.Workspace.State != record.WorkspaceReady {
		t.Fatalf("status %s (%s), worktree %s", s.Status(), s.Error, s.Workspace.State)
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(ws.Path, "cwd.txt"))); got != filepath.Join(ws.Path, "api") {
		t.Errorf("the agent ran in %s, want the same subdirectory of its worktree", got)
	}
	if _, err := os.Stat(filepath.Join(w.Work, "api", "limit.go")); !os.IsNotExist(err) {
		t.Error("the worker's file appeared in the main checkout")
	}
	if st := git(t, w.Work, "status", "--porcelain"); st != "" {
		t.Errorf("the main checkout is not clean: %q", st)
	}
	t1 := s.Turns[0]
	if t1.Commit == "" || !reflect.DeepEqual(t1.Files, []string{"api/limit.go", "cwd.txt"}) {
		t.Fatalf("turn 1 commit %q files %v", t1.Commit, t1.Files)
	}
	if got := git(t, w.Work, "log", "-1", "--format=%an|%cn|%s", t1.Commit); got != "zwarm|zwarm|zwarm "+record.ShortID(s.ID)+" turn 1: add rate limiting" {
		t.Errorf("commit %q", got)
	}
	if s.Workspace.Head != t1.Commit || s.Workspace.Changes == nil || *s.Workspace.Changes != (workspace.Stat{Files: 2, Added: 4}) || s.ChangesText() != "+4 -0 in 2 files" {
		t.Errorf("changes %+v %q", s.Workspace.Changes, s.ChangesText())
	}

	// A follow-up's turn is committed on its own, and lists only its files.
	w.agent(`printf 'package api\n\nvar Limit = 20\n' > limit.go`)
	if _, err := w.Manager.Inject(context.Background(), s.ID, "raise the limit"); err != nil {
		t.Fatal(err)
	}
	s = w.wait(s.ID)
	t2 := s.Turns[1]
	if t2.Commit == "" || t2.Commit == t1.Commit || !reflect.DeepEqual(t2.Files, []string{"api/limit.go"}) {
		t.Fatalf("turn 2 commit %q files %v", t2.Commit, t2.Files)
	}
	if d := w.diff(s.ID, sessions.DiffRequest{Turn: 2}); !strings.Contains(d, "-var Limit = 10") || !strings.Contains(d, "+var Limit = 20") || strings.Contains(d, "cwd.txt") {
		t.Errorf("turn 2's diff:\n%s", d)
	}
	if d := w.diff(s.ID, sessions.DiffRequest{Options: workspace.DiffOptions{Format: workspace.NamesOnly}}); d != "api/limit.go\ncwd.txt\n" {
		t.Errorf("the whole change: %q", d)
	}
}

func TestTwoWorkersOfOneRepoChangeTheSameFileApart(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"config.go": "package config\n\nconst Port = 80\n"})
	w.agent(`printf 'package config\n\nconst Port = %s\n' "$(cat ../port 2>/dev/null || echo 0)" > config.go`)
	// Each worker reads its port from a file only its worktree has, written
	// before it starts: the two must never see each other's edits.
	a := w.spawnIn(w.Work, "use port 8080", sessions.SpawnRequest{})
	b := w.spawnIn(w.Work, "use port 9090", sessions.SpawnRequest{})
	for _, x := range []struct {
		s    *record.Session
		port string
	}{{a, "8080"}, {b, "9090"}} {
		x := x
		sessionstest.Eventually(t, "worktree of "+record.ShortID(x.s.ID), func() bool { return x.s.Workspace.Worktree().Exists() })
	}
	w.wait(a.ID)
	w.wait(b.ID)
	// Both wrote "0": the port files were not there. Run one more turn each
	// with a port only its own worktree has.
	for _, x := range []struct {
		s    *record.Session
		port string
	}{{a, "8080"}, {b, "9090"}} {
		writeFile(t, filepath.Join(x.s.Workspace.Path, "..", filepath.Base(x.s.Workspace.Path)+".port"), x.port)
	}
	w.agent(`printf 'package config\n\nconst Port = %s\n' "$(cat "$(pwd).port")" > config.go`)
	for _, s := range []*record.Session{a, b} {
		if _, err := w.Manager.Inject(context.Background(), s.ID, "now for real"); err != nil {
			t.Fatal(err)
		}
	}
	a, b = w.wait(a.ID), w.wait(b.ID)
	da, db := w.diff(a.ID, sessions.DiffRequest{}), w.diff(b.ID, sessions.DiffRequest{})
	if !strings.Contains(da, "+const Port = 8080") || strings.Contains(da, "9090") {
		t.Errorf("a's diff:\n%s", da)
	}
	if !strings.Contains(db, "+const Port = 9090") || strings.Contains(db, "8080") {
		t.Errorf("b's diff:\n%s", db)
	}
	if got := readFile(t, filepath.Join(w.Work, "config.go")); got != "package config\n\nconst Port = 80\n" {
		t.Errorf("the main checkout changed before any landing: %q", got)
	}
}

func TestLandSquashesIntoTheCheckoutAndKeepsItsUncommittedWork(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.go": "package a\n", "notes.txt": "mine\n"})
	w.agent(`printf 'package a\n\nvar X = 1\n' > a.go`)
	s := w.wait(w.spawnIn(w.Work, "set X", sessions.SpawnRequest{}).ID)
	writeFile(t, filepath.Join(w.Work, "notes.txt"), "mine, edited\n")
	before := git(t, w.Work, "rev-parse", "HEAD")

	res, err := w.Manager.Land(context.Background(), s.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil {
		t.Fatal(err)
	}
	if res.Into != "main" || res.Commit == "" || !res.Removed || res.Stat != (workspace.Stat{Files: 1, Added: 2}) {
		t.Fatalf("%+v", res)
	}
	if git(t, w.Work, "rev-parse", "HEAD") != res.Commit || git(t, w.Work, "rev-parse", "HEAD^") != before {
		t.Error("main is not one commit further")
	}
	if msg := git(t, w.Work, "log", "-1", "--format=%B"); !strings.HasPrefix(msg, "set X\n\ndone") || !strings.Contains(msg, "Zwarm-Session: "+s.ID) {
		t.Errorf("message %q: the task, the worker's last message, the session", msg)
	}
	if readFile(t, filepath.Join(w.Work, "a.go")) != "package a\n\nvar X = 1\n" || readFile(t, filepath.Join(w.Work, "notes.txt")) != "mine, edited\n" {
		t.Error("the landed change is missing, or the uncommitted edit was lost")
	}
	s = res.Session
	if !s.Workspace.LandedNow() || s.ChangesText() != "landed" || s.Workspace.State != record.WorkspaceRemoved {
		t.Errorf("after landing: %+v %q", s.Workspace, s.ChangesText())
	}
	if s.Workspace.Worktree().Exists() || git(t, w.Work, "branch", "--list", "zwarm/*") != "" {
		t.Error("the worktree or the branch is still there")
	}
	again, err := w.Manager.Land(context.Background(), s.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil || !again.Already {
		t.Errorf("landing again: %+v %v", again, err)
	}
	// The listing (through its cache) says so too.
	list, _ := w.Manager.List(context.Background(), listing.Options{})
	if len(list) != 1 || list[0].ChangesText() != "landed" {
		t.Errorf("listed as %q", list[0].ChangesText())
	}

	// A follow-up makes the worktree again, from what was landed.
	w.agent(`printf 'package a\n\nvar X = 2\n' > a.go`)
	if _, err := w.Manager.Inject(context.Background(), s.ID, "make it 2"); err != nil {
		t.Fatal(err)
	}
	s = w.wait(s.ID)
	if s.Status() != record.StatusCompleted || s.Workspace.State != record.WorkspaceReady || s.Workspace.BaseCommit != res.Commit || s.ChangesText() != "+1 -1 in 1 file" {
		t.Fatalf("after the follow-up: %s %+v %q", s.Status(), s.Workspace, s.ChangesText())
	}
	// The first landing stays on record.
	if e := s.Workspace.Earlier; len(e) != 1 || e[0].Commit != res.Commit || e[0].Into != "main" || s.Workspace.Landed != nil {
		t.Errorf("the earlier landings after the follow-up: %+v", e)
	}
}

func TestLandRefusesARunningWorkerAndUncommittedChangesItWouldOverwrite(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.go": "package a\n"})
	w.agent(`printf 'worker\n' > a.go; sleep 30`)
	s := w.spawnIn(w.Work, "edit a", sessions.SpawnRequest{})
	sessionstest.Eventually(t, "the worker to write", func() bool {
		b, _ := os.ReadFile(filepath.Join(s.Workspace.Path, "a.go"))
		return string(b) == "worker\n"
	})
	if _, err := w.Manager.Land(context.Background(), s.ID, sessions.LandOptions{Dir: w.Work}); !errors.Is(err, sessions.ErrRunning) || !strings.Contains(err.Error(), "wait or kill it first") {
		t.Fatalf("landing a running worker: %v", err)
	}
	// A kill leaves the worktree, and what the worker did is committed.
	if _, err := w.Manager.Kill(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	s = w.wait(s.ID)
	if s.Status() != record.StatusKilled || !s.Workspace.Worktree().Exists() || s.Turns[0].Commit == "" {
		t.Fatalf("after kill: %s, worktree there %v, commit %q", s.Status(), s.Workspace.Worktree().Exists(), s.Turns[0].Commit)
	}
	writeFile(t, filepath.Join(w.Work, "a.go"), "person\n")
	head := git(t, w.Work, "rev-parse", "HEAD")
	_, err := w.Manager.Land(context.Background(), s.ID, sessions.LandOptions{Dir: w.Work})
	var de *sessions.DirtyError
	if !errors.As(err, &de) || !reflect.DeepEqual(de.Files, []string{"a.go"}) {
		t.Fatalf("landing over an uncommitted change: %v", err)
	}
	if readFile(t, filepath.Join(w.Work, "a.go")) != "person\n" || git(t, w.Work, "rev-parse", "HEAD") != head {
		t.Error("the refused landing changed something")
	}
}

func TestAConflictIsRefusedAndUpdateHasTheWorkerResolveIt(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.txt": "1\n2\n3\n"})
	w.agent(`printf '1\nfirst\n3\n' > a.txt`)
	first := w.wait(w.spawnIn(w.Work, "first", sessions.SpawnRequest{}).ID)
	w.agent(`printf '1\nsecond\n3\n' > a.txt`)
	second := w.wait(w.spawnIn(w.Work, "second", sessions.SpawnRequest{}).ID)
	if _, err := w.Manager.Land(context.Background(), first.ID, sessions.LandOptions{Dir: w.Work}); err != nil {
		t.Fatal(err)
	}
	head, status := git(t, w.Work, "rev-parse", "HEAD"), git(t, w.Work, "status", "--porcelain")
	_, err := w.Manager.Land(context.Background(), second.ID, sessions.LandOptions{Dir: w.Work})
	var ce *sessions.LandConflictError
	if !errors.As(err, &ce) || !reflect.DeepEqual(ce.Files, []string{"a.txt"}) || !strings.Contains(err.Error(), "zwarm update "+record.ShortID(second.ID)) {
		t.Fatalf("conflicting landing: %v", err)
	}
	if git(t, w.Work, "rev-parse", "HEAD") != head || git(t, w.Work, "status", "--porcelain") != status {
		t.Fatal("the refused landing changed the checkout")
	}
	if s, _ := w.Manager.Get(context.Background(), second.ID); s.ChangesText() != "conflict" {
		t.Errorf("listed as %q", s.ChangesText())
	}

	// The worker resolves the markers it finds.
	w.agent(`grep -q '<<<<<<<' a.txt && printf '1\nfirst and second\n3\n' > a.txt || true`)
	up, err := w.Manager.Update(context.Background(), second.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if up.From != "main" || up.Commit != head || !reflect.DeepEqual(up.Conflict, []string{"a.txt"}) || up.FollowUp == nil ||
		!strings.Contains(up.FollowUp.Entry.Text, "a.txt") {
		t.Fatalf("update %+v", up)
	}
	s := w.wait(second.ID)
	if s.Status() != record.StatusCompleted || len(s.Workspace.Conflict) != 0 || s.ChangesText() == "conflict" {
		t.Fatalf("after the worker's turn: %s %+v %q", s.Status(), s.Workspace.Conflict, s.ChangesText())
	}
	res, err := w.Manager.Land(context.Background(), second.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(w.Work, "a.txt")); got != "1\nfirst and second\n3\n" || git(t, w.Work, "rev-parse", "HEAD") != res.Commit {
		t.Errorf("after landing the resolution: %q", got)
	}
}

func TestLandAllVerifiesEachAndStopsAtTheFirstFailure(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	var ids []string
	for _, f := range []string{"one", "bad", "three"} {
		w.agent("echo " + f + " > " + f + ".txt")
		ids = append(ids, w.wait(w.spawnIn(w.Work, "write "+f, sessions.SpawnRequest{}).ID).ID)
		time.Sleep(10 * time.Millisecond) // distinct creation times: the queue's order
	}
	head := git(t, w.Work, "rev-parse", "HEAD")
	var out bytes.Buffer
	q, err := w.Manager.LandAll(context.Background(), sessions.LandOptions{Dir: w.Work, Verify: "ls; test ! -f bad.txt", VerifyOut: &out})
	var ve *workspace.VerifyError
	if !errors.As(err, &ve) || ve.Code != 1 {
		t.Fatalf("queue: %v", err)
	}
	if len(q.Landed) != 1 || q.Landed[0].Session.ID != ids[0] || !q.Landed[0].Verified || q.Failed.ID != ids[1] || len(q.Left) != 1 || q.Left[0].ID != ids[2] {
		t.Fatalf("landed %d, failed %v, left %d", len(q.Landed), q.Failed, len(q.Left))
	}
	if got := git(t, w.Work, "log", "--format=%s", head+"..HEAD"); got != "write one" {
		t.Errorf("main got %q, want only the first", got)
	}
	if _, err := os.Stat(filepath.Join(w.Work, "bad.txt")); !os.IsNotExist(err) {
		t.Error("the change that failed its verify landed")
	}
	if !strings.Contains(out.String(), "one.txt") || !strings.Contains(out.String(), "bad.txt") {
		t.Errorf("verify output %q: each ran on its own candidate", out.String())
	}
	// The failed one is back on its branch, untouched.
	bad, _ := w.Manager.Get(context.Background(), ids[1])
	if got := git(t, bad.Workspace.Path, "symbolic-ref", "--short", "HEAD"); got != bad.Workspace.Branch || bad.Workspace.LandedNow() {
		t.Errorf("the failed worker's worktree is on %q", got)
	}
}

// A worker whose turn's commit did not finish (a timeout: its changes
// are unknown, not none) is landed by land --all as land ID lands it,
// what it left uncommitted included, not passed over unnamed.
func TestLandAllLandsAWorkerWhoseChangesAreUnknown(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	w.agent("echo b > b.txt")
	s := w.wait(w.spawnIn(w.Work, "add b", sessions.SpawnRequest{}).ID)
	writeFile(t, filepath.Join(s.Workspace.Path, "c.txt"), "left uncommitted\n")
	if _, err := w.Store.Update(s.ID, func(tx *state.Tx) error {
		ws := tx.Session().Workspace // as a turn's commit cut short leaves it
		ws.Changes, ws.Committed, ws.Error = nil, 0, "stage the worker's changes: signal: killed (git took over 30s)"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	q, err := w.Manager.LandAll(context.Background(), sessions.LandOptions{Dir: w.Work})
	if err != nil || len(q.Landed) != 1 || q.Landed[0].Session.ID != s.ID {
		t.Fatalf("land --all: %+v %v", q, err)
	}
	if got := git(t, w.Work, "show", "--name-only", "--format=", "HEAD"); got != "b.txt\nc.txt" {
		t.Fatalf("landed %q, want b.txt and c.txt", got)
	}
}

func TestRmRefusesWorkNeverLandedUnlessForced(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	w.agent("echo new > b.txt")
	s := w.wait(w.spawnIn(w.Work, "add b", sessions.SpawnRequest{}).ID)
	_, err := w.Manager.Remove(context.Background(), s.ID, false)
	var ue *sessions.UnlandedError
	if !errors.As(err, &ue) || ue.Commits != 1 || !strings.Contains(err.Error(), "1 commit never landed (+1 -0 in 1 file)") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("rm: %v", err)
	}
	if !s.Workspace.Worktree().Exists() {
		t.Fatal("a refused rm removed the worktree")
	}
	res, err := w.Manager.Clean(context.Background(), sessions.CleanOptions{})
	if err != nil || len(res.Removed) != 0 || len(res.Kept) != 1 {
		t.Fatalf("clean: %+v %v", res, err)
	}
	if _, err := w.Manager.Remove(context.Background(), s.ID, true); err != nil {
		t.Fatal(err)
	}
	if s.Workspace.Worktree().Exists() || git(t, w.Work, "branch", "--list", "zwarm/*") != "" {
		t.Error("rm --force left the worktree or the branch")
	}
	// A worker that changed nothing goes without --force.
	w.agent("true")
	s = w.wait(w.spawnIn(w.Work, "nothing", sessions.SpawnRequest{}).ID)
	if _, err := w.Manager.Remove(context.Background(), s.ID, false); err != nil {
		t.Fatalf("rm of a worker that changed nothing: %v", err)
	}
}

func TestWorktreeSetupBringsFilesAlongAndAFailingSetupFailsTheSession(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{".gitignore": ".env\nnode_modules/\n", "a": "a\n"})
	writeFile(t, filepath.Join(w.Work, ".env"), "TOKEN=1\n")
	writeFile(t, filepath.Join(w.Work, "node_modules", "m.js"), "x\n")
	w.WriteConfig("kill_grace = \"300ms\"\n[worktrees]\ncopy = [\".env\"]\nsymlink = [\"node_modules\"]\nsetup = \"echo setting up; cat .env\"\n")
	w.agent("cat .env node_modules/m.js > seen.txt")
	s := w.wait(w.spawnIn(w.Work, "look", sessions.SpawnRequest{}).ID)
	if s.Status() != record.StatusCompleted || readFile(t, filepath.Join(s.Workspace.Path, "seen.txt")) != "TOKEN=1\nx\n" {
		t.Fatalf("status %s (%s)", s.Status(), s.Error)
	}
	if log := readFile(t, w.Store.SetupLog(s.ID)); !strings.Contains(log, "setting up\nTOKEN=1") || !strings.Contains(log, "copy .env") {
		t.Errorf("setup log %q", log)
	}
	if files := git(t, s.Workspace.Path, "show", "--name-only", "--format=", "HEAD"); files != "seen.txt" {
		t.Errorf("committed %q: what was brought along stays out", files)
	}

	w.WriteConfig("kill_grace = \"300ms\"\n[worktrees]\nsetup = \"echo npm ci is broken; exit 3\"\n")
	s = w.wait(w.spawnIn(w.Work, "look", sessions.SpawnRequest{}).ID)
	if s.Status() != record.StatusFailed || !strings.Contains(s.Error, "exit code 3") || !strings.Contains(s.Error, "npm ci is broken") ||
		s.Workspace.State != record.WorkspaceFailed || len(s.Turns) != 0 {
		t.Fatalf("failing setup: %s %q %s", s.Status(), s.Error, s.Workspace.State)
	}
}

func TestKillWhileTheWorktreeIsPrepared(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	w.WriteConfig("kill_grace = \"300ms\"\n[worktrees]\nsetup = \"sleep 60 & sleep 60\"\n")
	s := w.spawnIn(w.Work, "slow setup", sessions.SpawnRequest{})
	sessionstest.Eventually(t, "setup to start", func() bool {
		b, _ := os.ReadFile(w.Store.SetupLog(s.ID))
		return strings.Contains(string(b), "setup: sleep")
	})
	if got, _ := w.Manager.Get(context.Background(), s.ID); got.Status() != record.StatusPending || got.Workspace.State != record.WorkspacePreparing || got.ChangesText() != "preparing" {
		t.Fatalf("while preparing: %s %s", got.Status(), got.Workspace.State)
	}
	// A session whose worktree is being made is live: land refuses it as
	// still running, not as a worktree never made.
	if _, err := w.Manager.Land(context.Background(), s.ID, sessions.LandOptions{}); !errors.Is(err, sessions.ErrRunning) {
		t.Fatalf("land while preparing: %v; want it refused as still running", err)
	}
	start := time.Now()
	if _, err := w.Manager.Kill(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	s = w.wait(s.ID)
	t.Logf("killed while its worktree was prepared in %s", time.Since(start).Round(time.Millisecond))
	// The outcome, not the time: had the supervisor not stopped the setup
	// itself, the kill would have taken over and said so in the error.
	if s.Status() != record.StatusKilled || strings.Contains(s.Error, "did not stop") || strings.Contains(s.Error, "did not hand over") {
		t.Fatalf("the session is %s (%q); want killed, its supervisor having stopped the setup itself (no kill taking over)", s.Status(), s.Error)
	}
	// cleanup fails the test if a setup process survived
}

func TestSpawnChecksTheRepositoryAndTheBaseFirst(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	for _, req := range []sessions.SpawnRequest{
		{Task: "x", Adapter: "fake", WorkingDir: w.Work, Base: "no-such-branch"},
		{Task: "x", Adapter: "fake", WorkingDir: w.Work, Base: "main", WithChanges: true},
		{Task: "x", Adapter: "fake", WorkingDir: w.Work, Isolation: config.IsolationNone, Base: "main"},
		{Task: "x", Adapter: "fake", WorkingDir: t.TempDir(), Isolation: config.IsolationWorktree},
		{Task: "x", Adapter: "fake", WorkingDir: w.Work, Isolation: "bubble"},
	} {
		if _, err := w.Manager.Spawn(context.Background(), req); !errors.Is(err, config.ErrInvalidRequest) {
			t.Errorf("%+v: %v, want an invalid request", req, err)
		}
	}
	if ids, _ := w.Store.Ids(); len(ids) != 0 {
		t.Errorf("refused spawns recorded %v", ids)
	}
	// Outside a repository, and when asked, a worker works in place.
	for _, req := range []sessions.SpawnRequest{{Isolation: config.IsolationNone}, {}} {
		dir := w.Work
		if req.Isolation == "" {
			dir = t.TempDir()
		}
		s := w.spawnIn(dir, "in place", req)
		if s.Workspace != nil || s.WorkingDir != dir || s.ChangesText() != "in place" {
			t.Errorf("%+v: workspace %+v in %s", req, s.Workspace, s.WorkingDir)
		}
		w.wait(s.ID)
	}
}

func TestWithChangesStartsFromTheUncommittedWork(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.go": "package a\n"})
	writeFile(t, filepath.Join(w.Work, "a.go"), "package a // wip\n")
	writeFile(t, filepath.Join(w.Work, "new.go"), "package a\n")
	w.agent(`cat a.go new.go > seen.txt`)
	s := w.wait(w.spawnIn(w.Work, "continue", sessions.SpawnRequest{WithChanges: true}).ID)
	if got := readFile(t, filepath.Join(s.Workspace.Path, "seen.txt")); got != "package a // wip\npackage a\n" {
		t.Fatalf("the worker saw %q", got)
	}
	if d := w.diff(s.ID, sessions.DiffRequest{Options: workspace.DiffOptions{Format: workspace.NamesOnly}}); d != "seen.txt\n" {
		t.Errorf("its diff is against the snapshot: %q", d)
	}
	if git(t, w.Work, "status", "--porcelain") != "M a.go\n?? new.go" && git(t, w.Work, "status", "--porcelain") != " M a.go\n?? new.go" {
		t.Errorf("the checkout's work in progress changed: %q", git(t, w.Work, "status", "--porcelain"))
	}
}

func TestALinkedWorktreeCallerStartsFromItsOwnHeadAndLandsThere(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	linked := filepath.Join(t.TempDir(), "side")
	git(t, w.Work, "worktree", "add", "-q", "-b", "side", linked)
	git(t, linked, "commit", "-q", "--allow-empty", "-m", "side work")
	mainHead := git(t, w.Work, "rev-parse", "main")
	w.agent("echo x > x.txt")
	s := w.wait(w.spawnIn(linked, "on side", sessions.SpawnRequest{}).ID)
	if s.Workspace.Base != "side" || s.Workspace.BaseCommit != git(t, linked, "rev-parse", "HEAD") || s.Workspace.Origin != linked {
		t.Fatalf("base %s %s, origin %s", s.Workspace.Base, s.Workspace.BaseCommit, s.Workspace.Origin)
	}
	res, err := w.Manager.Land(context.Background(), s.ID, sessions.LandOptions{Dir: linked})
	if err != nil || res.Into != "side" {
		t.Fatalf("land: %+v %v", res, err)
	}
	if git(t, w.Work, "rev-parse", "main") != mainHead || readFile(t, filepath.Join(linked, "x.txt")) != "x\n" {
		t.Error("the main checkout's branch moved, or the linked checkout did not get the change")
	}
}

// A supervisor killed before it could commit the turn's work: the session
// is failed, and its worker's uncommitted work is still shown by diff and
// landed (committed first), never lost with the worktree.
func TestWorkLeftUncommittedByADeadSupervisorIsDiffedAndLanded(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.go": "package a\n"})
	w.agent(`echo 'package a // half done' > a.go; sleep 300`)
	s := w.spawnIn(w.Work, "half", sessions.SpawnRequest{})
	var sup *proc.Ref
	sessionstest.Eventually(t, "the worker to write", func() bool {
		g, _ := w.Manager.Get(context.Background(), s.ID)
		sup = g.Owner
		b, _ := os.ReadFile(filepath.Join(s.Workspace.Path, "a.go"))
		return sup != nil && sup.Role == record.RoleSupervisor && g.Agent != nil && string(b) == "package a // half done\n"
	})
	syscall.Kill(sup.PID, syscall.SIGKILL)
	s = w.wait(s.ID)
	if s.Status() != record.StatusFailed || s.AllCommitted() || s.Turns[0].Commit != "" {
		t.Fatalf("after the supervisor died: %s, all committed %v", s.Status(), s.AllCommitted())
	}
	if d := w.diff(s.ID, sessions.DiffRequest{}); !strings.Contains(d, "+package a // half done") {
		t.Fatalf("diff misses the uncommitted work:\n%s", d)
	}
	res, err := w.Manager.Land(context.Background(), s.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil {
		t.Fatal(err)
	}
	if readFile(t, filepath.Join(w.Work, "a.go")) != "package a // half done\n" || !res.Removed {
		t.Fatalf("landed %+v", res)
	}
}

// Someone's own edits in a settled worker's worktree are not the worker's:
// a landing leaves them, and the worktree, where they are.
func TestLandKeepsAWorktreeSomeoneEditedByHand(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.go": "package a\n"})
	w.agent(`echo 'package a // worker' > a.go`)
	s := w.wait(w.spawnIn(w.Work, "edit", sessions.SpawnRequest{}).ID)
	writeFile(t, filepath.Join(s.Workspace.Path, "mine.txt"), "by hand\n")
	res, err := w.Manager.Land(context.Background(), s.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed || readFile(t, filepath.Join(s.Workspace.Path, "mine.txt")) != "by hand\n" {
		t.Fatal("the hand-made change went with the worktree")
	}
	if _, err := os.Stat(filepath.Join(w.Work, "mine.txt")); !os.IsNotExist(err) {
		t.Fatal("a change that is not the worker's landed")
	}
}

// A live agent (claude's stream-json input) in a worktree serves one turn
// per process: a follow-up queued while it works goes to a resumed
// process after the turn, so each turn's work is committed on its own.
func TestALiveWorkerInAWorktreeCommitsEveryTurn(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	gate := filepath.Join(t.TempDir(), "go")
	w.SetScript(fakeagent.Script{Live: true,
		ByPrompt: map[string][]map[string]any{
			"first":  append([]map[string]any{{"run": "echo 1 > one.txt"}, {"wait_file": gate}}, fakeagent.Completes("one", 100)...),
			"second": append([]map[string]any{{"run": "echo 2 > two.txt"}}, fakeagent.Completes("two", 200)...),
		},
		Default: fakeagent.Completes("?", 1)})
	s := w.spawnIn(w.Work, "first", sessions.SpawnRequest{})
	sessionstest.Eventually(t, "the first turn to run", func() bool {
		_, err := os.Stat(filepath.Join(s.Workspace.Path, "one.txt"))
		return err == nil
	})
	res, err := w.Manager.Inject(context.Background(), s.ID, "second")
	if err != nil || res.Outcome != sessions.InjectQueued || res.Live {
		t.Fatalf("inject: %+v %v (in a worktree, a follow-up waits for the next process)", res, err)
	}
	writeFile(t, gate, "")
	s = w.wait(s.ID)
	if len(s.Turns) != 2 || s.Status() != record.StatusCompleted {
		t.Fatalf("%s with %d turns", s.Status(), len(s.Turns))
	}
	t1, t2 := s.Turns[0], s.Turns[1]
	if t2.Live || !t2.Resumed {
		t.Errorf("turn 2 live %v resumed %v", t2.Live, t2.Resumed)
	}
	if t1.Commit == "" || t2.Commit == "" || strings.Join(t1.Files, ",") != "one.txt" || strings.Join(t2.Files, ",") != "two.txt" {
		t.Errorf("turn 1 %q %v, turn 2 %q %v: each turn its own commit", t1.Commit, t1.Files, t2.Commit, t2.Files)
	}
}

// The three ways to land, into the checked-out branch or another one.
func TestLandStrategiesAndTargets(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	git(t, w.Work, "branch", "release")
	ctx := context.Background()
	spawnWith := func(task, script string) *record.Session {
		w.agent(script)
		return w.wait(w.spawnIn(w.Work, task, sessions.SpawnRequest{}).ID)
	}
	sq := spawnWith("squash me", `echo s > s.txt; git add s.txt; git -c user.name=Agent -c user.email=a@x commit -qm "agent's own"; echo s2 > s2.txt`)
	if n := git(t, w.Work, "rev-list", "--count", sq.Workspace.BaseCommit+".."+sq.Workspace.Head); n != "2" {
		t.Fatalf("the worker's branch has %s commits, want its own and zwarm's", n)
	}
	// Into a branch no worktree has checked out: only the ref moves; with
	// --keep the worktree and the branch stay.
	res, err := w.Manager.Land(ctx, sq.ID, sessions.LandOptions{Dir: w.Work, Into: "release", Message: "Squashed\n\nby hand", Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if git(t, w.Work, "rev-parse", "release") != res.Commit || git(t, w.Work, "log", "-1", "--format=%B", "release") != "Squashed\n\nby hand" ||
		git(t, w.Work, "rev-parse", "release^") != sq.Workspace.BaseCommit {
		t.Errorf("release after a squash landing: %s", git(t, w.Work, "log", "--format=%s", "release"))
	}
	if _, err := os.Stat(filepath.Join(w.Work, "s.txt")); !os.IsNotExist(err) {
		t.Error("a landing into another branch touched the checkout")
	}
	if res.Removed || !sq.Workspace.Worktree().Exists() || git(t, w.Work, "branch", "--list", sq.Workspace.Branch) == "" {
		t.Error("--keep did not keep the worktree and the branch")
	}

	mg := spawnWith("merge me", "echo m > m.txt")
	res, err = w.Manager.Land(ctx, mg.ID, sessions.LandOptions{Dir: w.Work, Strategy: "merge"})
	if err != nil {
		t.Fatal(err)
	}
	if parents := strings.Fields(git(t, w.Work, "log", "-1", "--format=%P", "main")); len(parents) != 2 || parents[1] != mg.Workspace.Head {
		t.Errorf("a merge landing's parents: %v", parents)
	}

	rb := spawnWith("rebase me", `echo r > r.txt; git add r.txt; git -c user.name=Agent -c user.email=a@x commit -qm "agent: r"; echo r2 > r2.txt`)
	before := git(t, w.Work, "rev-parse", "main")
	res, err = w.Manager.Land(ctx, rb.ID, sessions.LandOptions{Dir: w.Work, Strategy: "rebase"})
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, w.Work, "log", "--format=%s", before+"..main"); got != "zwarm "+record.ShortID(rb.ID)+" turn 1: rebase me\nagent: r" {
		t.Errorf("a rebase landing puts the worker's commits on main: %q", got)
	}
	for _, f := range []string{"m.txt", "r.txt", "r2.txt"} {
		if _, err := os.Stat(filepath.Join(w.Work, f)); err != nil {
			t.Errorf("%s did not land: %v", f, err)
		}
	}
	if _, err := w.Manager.Land(ctx, rb.ID, sessions.LandOptions{Dir: w.Work, Strategy: "sideways"}); !errors.Is(err, config.ErrInvalidRequest) {
		t.Errorf("an unknown strategy: %v", err)
	}
}

// zwarm's own git work runs none of the user's hooks: a pre-commit hook
// that refuses everything does not stop a turn's commit, and post-commit
// and post-checkout hooks never run.
func TestTheUsersHooksDoNotRunForZwarm(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	hooks := filepath.Join(w.Work, ".git", "hooks")
	ran := filepath.Join(t.TempDir(), "ran")
	for name, body := range map[string]string{
		"pre-commit":    "#!/bin/sh\nexit 1\n",
		"post-commit":   "#!/bin/sh\necho post-commit >> " + ran + "\n",
		"post-checkout": "#!/bin/sh\necho post-checkout >> " + ran + "\n",
		"post-merge":    "#!/bin/sh\necho post-merge >> " + ran + "\n",
	} {
		writeFile(t, filepath.Join(hooks, name), body)
		os.Chmod(filepath.Join(hooks, name), 0o755)
	}
	w.agent("echo x > x.txt")
	s := w.wait(w.spawnIn(w.Work, "with hooks", sessions.SpawnRequest{}).ID)
	if s.Turns[0].Commit == "" || s.Workspace.Error != "" {
		t.Fatalf("the turn was not committed: %q", s.Workspace.Error)
	}
	if _, err := w.Manager.Land(context.Background(), s.ID, sessions.LandOptions{Dir: w.Work}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("hooks ran: %s", b)
	}
}

// While a landing works in a worker's worktree (here, its verify runs
// there), nothing else may: a follow-up, another landing, a removal are
// refused, and all go once it is done.
func TestALandingKeepsTheWorktreeToItself(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	w.agent("echo b > b.txt")
	s := w.wait(w.spawnIn(w.Work, "add b", sessions.SpawnRequest{}).ID)
	dir := t.TempDir()
	w.LetVerifyWrite(dir)
	started, gate := filepath.Join(dir, "started"), filepath.Join(dir, "go")
	done := make(chan error, 1)
	go func() {
		_, err := w.Manager.Land(context.Background(), s.ID, sessions.LandOptions{Dir: w.Work,
			Verify: "touch " + started + "; while [ ! -f " + gate + " ]; do sleep 0.02; done"})
		done <- err
	}()
	sessionstest.Eventually(t, "the verify to run", func() bool { _, err := os.Stat(started); return err == nil })
	if _, err := w.Manager.Inject(context.Background(), s.ID, "more"); !errors.Is(err, record.ErrBusy) {
		t.Errorf("a follow-up during the landing: %v", err)
	}
	if _, err := w.Manager.Update(context.Background(), s.ID, ""); !errors.Is(err, record.ErrBusy) {
		t.Errorf("an update during the landing: %v", err)
	}
	if _, err := w.Manager.Remove(context.Background(), s.ID, true); !errors.Is(err, record.ErrBusy) {
		t.Errorf("rm --force during the landing: %v", err)
	}
	writeFile(t, gate, "")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := w.Manager.Inject(context.Background(), s.ID, "more"); err != nil {
		t.Errorf("a follow-up after the landing: %v", err)
	}
	w.wait(s.ID)
}

// A spawn that is refused makes nothing, not even the state dir.
func TestARefusedSpawnMakesNoStateDir(t *testing.T) {
	w := newWorld(t)
	st, _ := state.NewStore(filepath.Join(t.TempDir(), "fresh", ".zwarm"))
	m := sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: testAdapters{}, SupervisorArgv: []string{os.Args[0]}})
	for _, req := range []sessions.SpawnRequest{{Task: "x", Adapter: "nope", WorkingDir: w.Work}, {Task: "x", Adapter: "fake", WorkingDir: "/no/such/dir"},
		{Task: "x", Adapter: "fake", WorkingDir: w.Work, Isolation: config.IsolationWorktree}} {
		if _, err := m.Spawn(context.Background(), req); !errors.Is(err, config.ErrInvalidRequest) {
			t.Errorf("%+v: %v", req, err)
		}
	}
	if _, err := os.Stat(filepath.Dir(st.Dir())); !os.IsNotExist(err) {
		t.Fatalf("a refused spawn made %s: %v", filepath.Dir(st.Dir()), err)
	}
}

// An entry brought along through a symlinked directory fails the session
// before its agent runs, saying why in its error and its setup log, and
// nothing from outside the repository is in the worktree.
func TestNothingIsBroughtAlongThroughASymlink(t *testing.T) {
	w := repoWorld(t, map[string]string{".gitignore": "evil\n", ".worktreeinclude": "evil/secret.txt\n", "a": "a\n"})
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.txt"), "secret\n")
	if err := os.Symlink(outside, filepath.Join(w.Work, "evil")); err != nil {
		t.Fatal(err)
	}
	w.agent("true")
	s := w.wait(w.spawnIn(w.Work, "look", sessions.SpawnRequest{}).ID)
	const why = "evil in "
	if s.Status() != record.StatusFailed || !strings.Contains(s.Error, why) || !strings.Contains(s.Error, "is a symlink") || len(s.Turns) != 0 {
		t.Fatalf("status %s (%s)", s.Status(), s.Error)
	}
	if log := readFile(t, w.Store.SetupLog(s.ID)); !strings.Contains(log, "copy evil/secret.txt: evil in ") {
		t.Errorf("setup log %q", log)
	}
	if _, err := os.Lstat(filepath.Join(s.Workspace.Path, "evil", "secret.txt")); err == nil {
		t.Error("the secret was brought into the worktree")
	}
}

// Every landing stays on record: one whose worktree was kept, and the
// session went on working there, moves to the earlier landings when the
// next lands.
func TestEveryLandingOfAKeptWorktreeStaysOnRecord(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a.go": "package a\n"})
	w.agent(`printf 'package a\n\nvar X = 1\n' > a.go`)
	s := w.wait(w.spawnIn(w.Work, "set X", sessions.SpawnRequest{}).ID)
	first, err := w.Manager.Land(context.Background(), s.ID, sessions.LandOptions{Dir: w.Work, Keep: true})
	if err != nil || first.Removed {
		t.Fatalf("the first landing: %+v %v", first, err)
	}
	w.agent(`printf 'package a\n\nvar X = 2\n' > a.go`)
	if _, err := w.Manager.Inject(context.Background(), s.ID, "make it 2"); err != nil {
		t.Fatal(err)
	}
	w.wait(s.ID)
	second, err := w.Manager.Land(context.Background(), s.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil || second.Commit == first.Commit {
		t.Fatalf("the second landing: %+v %v", second, err)
	}
	ws := second.Session.Workspace
	if len(ws.Earlier) != 1 || ws.Earlier[0].Commit != first.Commit || ws.Landed == nil || ws.Landed.Commit != second.Commit {
		t.Fatalf("after two landings: earlier %+v, landed %+v", ws.Earlier, ws.Landed)
	}
}

// A commit made by hand in the worker's worktree while its landing runs
// (here: during the verify) did not land, and is never thrown away with
// the worktree: the worktree stays, the commit on the worker's branch,
// and the landing says why.
func TestACommitMadeWhileLandingKeepsTheWorktree(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	w.agent("echo b > b.txt")
	s := w.wait(w.spawnIn(w.Work, "add b", sessions.SpawnRequest{}).ID)
	wt := s.Workspace.Path
	// (The person's commit stands for one made in another terminal: the
	// verify may write the worker's repository, beside its worktree.)
	w.LetVerifyWrite(filepath.Dir(wt))
	hand := "cd '" + wt + "' && echo fix > fix.txt && git add fix.txt && git -c user.name=p -c user.email=p@x commit -qm 'hand fix'"
	var warned []string
	m := sessions.NewManager(sessions.ManagerOptions{Store: w.Store, Adapters: testAdapters{}, SupervisorArgv: []string{os.Args[0]}, ConfineArgv: confineArgv,
		Warn: func(err error) { warned = append(warned, err.Error()) }})
	res, err := m.Land(context.Background(), s.ID, sessions.LandOptions{Dir: w.Work, Verify: hand})
	if err != nil {
		t.Fatal(err)
	}
	if res.Removed || !s.Workspace.Worktree().Exists() {
		t.Fatalf("the worktree was removed with a commit made in it while it landed")
	}
	fix := git(t, wt, "rev-parse", "HEAD")
	if got := git(t, wt, "log", "-1", "--format=%s", fix); got != "hand fix" {
		t.Fatalf("the worktree's HEAD is %q", got)
	}
	if got := git(t, w.Work, "show", "--name-only", "--format=", "HEAD"); got != "b.txt" {
		t.Fatalf("landed %q, want the worker's b.txt alone", got)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "moved from") || !strings.Contains(warned[0], "land "+s.ID[:8]+" again") {
		t.Fatalf("warned %q", warned)
	}
	// Landed again, it goes with its worktree.
	res, err = m.Land(context.Background(), s.ID, sessions.LandOptions{Dir: w.Work})
	if err != nil || !res.Removed || git(t, w.Work, "show", "--name-only", "--format=", "HEAD") != "fix.txt" {
		t.Fatalf("landing the hand commit: %+v %v", res, err)
	}
}

// A worker whose change the branch has already (a twin's landing brought
// it) is recorded landed by the queue and told: the queue recorded it and
// said "nothing to land".
func TestLandAllTellsAChangeTheBranchHadAlready(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	w.agent("echo b > b.txt")
	first := w.wait(w.spawnIn(w.Work, "add b", sessions.SpawnRequest{}).ID)
	twin := w.wait(w.spawnIn(w.Work, "add b too", sessions.SpawnRequest{}).ID)
	if _, err := w.Manager.Land(context.Background(), first.ID, sessions.LandOptions{Dir: w.Work}); err != nil {
		t.Fatal(err)
	}
	q, err := w.Manager.LandAll(context.Background(), sessions.LandOptions{Dir: w.Work})
	if err != nil || len(q.Landed) != 1 || q.Landed[0].Session.ID != twin.ID || !q.Landed[0].Nothing || q.Landed[0].Stat.Empty() {
		t.Fatalf("land --all after its twin landed: %+v %v", q, err)
	}
	if s, _ := w.Manager.Get(context.Background(), twin.ID); s.Workspace.Landed == nil {
		t.Fatal("the twin is not recorded landed")
	}
}

package watchers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/watch"
)

// The directories below do not exist: symbolic links are resolved only
// where they can be (TestOverlapThroughASymlink makes real ones).
const testSrc = "/zwarm-overlap-test/src"

// inWorktree is a running worker of repository repo (its main checkout
// testSrc/repo), in a worktree of its own.
func inWorktree(id, repo string) *rec {
	r := newRec(id).startTurn(t0)
	r.s.WorkingDir = filepath.Join(testSrc, repo)
	r.s.Workspace = &record.Workspace{Repo: filepath.Join(testSrc, repo), GitDir: filepath.Join(testSrc, repo, ".git"),
		Origin: filepath.Join(testSrc, repo), Path: wtPath(repo, id), Branch: "zwarm/" + id, State: record.WorkspaceReady}
	return r
}

func wtPath(repo, id string) string { return filepath.Join("/zwarm-overlap-test/worktrees", repo, id) }

// workingInPlace is a running worker without a worktree, in dir.
func workingInPlace(id, dir string) *rec {
	r := newRec(id).startTurn(t0)
	r.s.WorkingDir = dir
	return r
}

func edits(paths ...string) record.Event {
	ev := record.Event{Type: record.EventFileChange}
	for _, p := range paths {
		ev.Changes = append(ev.Changes, record.FileChange{Path: p, Kind: "update"})
	}
	return ev
}

// edit is r's agent editing rel in its worktree, reported absolute.
func (r *rec) edit(rel ...string) watch.Update {
	var abs []string
	for _, p := range rel {
		abs = append(abs, filepath.Join(r.s.Workspace.Path, p))
	}
	return r.update(false, edits(abs...))
}

// endTurn ends the running turn having changed files, and starts the
// next (a queued follow-up), in one update as the supervisor does.
func (r *rec) endTurn(at time.Time, files ...string) *rec {
	t := &r.s.Turns[len(r.s.Turns)-1]
	sessionstest.SetStatus(t, record.StatusCompleted)
	t.EndedAt, t.Files = &at, files
	return r.startTurn(at)
}

const (
	idA = "3f2a9c1d-0000-4000-8000-00000000000a"
	idB = "9c1d4e2f-0000-4000-8000-00000000000b"
	idC = "c0ffee00-0000-4000-8000-00000000000c"
)

func overlapAlerts(t *testing.T, got []Alert, reasons ...string) {
	t.Helper()
	var have []string
	for _, a := range got {
		if a.Watcher != "overlap" {
			t.Fatalf("unexpected alert %+v", a)
		}
		have = append(have, a.SessionID[:8]+": "+a.Reason)
	}
	if strings.Join(have, "\n") != strings.Join(reasons, "\n") {
		t.Fatalf("alerts:\n%s\nwant:\n%s", strings.Join(have, "\n"), strings.Join(reasons, "\n"))
	}
}

func standingOverlaps(w *Workers) map[string]int {
	out := map[string]int{}
	for id, as := range w.Standing() {
		for _, a := range as {
			if a.Watcher == "overlap" {
				out[id[:8]]++
			}
		}
	}
	return out
}

func TestOverlapSameFileInTwoLiveWorkers(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	a, b := inWorktree(idA, "shop"), inWorktree(idB, "shop")
	want(t, feed(t, w, t0, a.update(true)))
	want(t, feed(t, w, t0, b.update(true)))
	want(t, feed(t, w, t0, synced()))
	overlapAlerts(t, feed(t, w, t0, a.edit("api/server.go", "README.md")))
	overlapAlerts(t, feed(t, w, t0, b.edit("api/handlers.go")))
	got := feed(t, w, t0.Add(time.Second), b.edit("api/server.go"))
	overlapAlerts(t, got, "9c1d4e2f: 3f2a9c1d and 9c1d4e2f both change api/server.go: the second to land may conflict")
	if a := got[0]; a.Action != Nudge || a.Status != record.StatusRunning || a.Task != "task "+idB || !a.At.Equal(t0.Add(time.Second)) {
		t.Errorf("alert %+v", a)
	}
	// Once per pair and file, whoever changes it again.
	overlapAlerts(t, feed(t, w, t0, b.edit("api/server.go")))
	overlapAlerts(t, feed(t, w, t0, a.edit("api/server.go")))
	if st := standingOverlaps(w); len(st) != 1 || st["9c1d4e2f"] != 1 {
		t.Errorf("standing %v", st)
	}
	// A third worker on it meets both, in a stable order; a second file
	// shared is a second alert.
	c := inWorktree(idC, "shop")
	overlapAlerts(t, feed(t, w, t0, c.edit("api/server.go")),
		"c0ffee00: 3f2a9c1d and c0ffee00 both change api/server.go: the second to land may conflict",
		"c0ffee00: 9c1d4e2f and c0ffee00 both change api/server.go: the second to land may conflict")
	overlapAlerts(t, feed(t, w, t0, b.edit("README.md")),
		"9c1d4e2f: 3f2a9c1d and 9c1d4e2f both change README.md: the second to land may conflict")
	if st := standingOverlaps(w); st["9c1d4e2f"] != 2 || st["c0ffee00"] != 2 {
		t.Errorf("standing %v", st)
	}
}

func TestOverlapDifferentFilesOrRepositories(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	want(t, feed(t, w, t0, synced()))
	a, b := inWorktree(idA, "shop"), inWorktree(idB, "shop")
	other := inWorktree(idC, "blog") // another repository, the same relative path
	overlapAlerts(t, feed(t, w, t0, a.edit("api/server.go")))
	overlapAlerts(t, feed(t, w, t0, b.edit("api/server_test.go", "api/server.go.orig", "api")))
	overlapAlerts(t, feed(t, w, t0, other.edit("api/server.go")))
	// A repository nested in another's directory: the same place on disk,
	// but not the same repository.
	nested := inWorktree("d0000000-0000-4000-8000-00000000000d", "shop/vendor/lib")
	overlapAlerts(t, feed(t, w, t0, a.edit("vendor/lib/lib.go")))
	overlapAlerts(t, feed(t, w, t0, nested.edit("lib.go")))
	// Paths outside its worktree are not a worker's change of its
	// repository: the main checkout, another worktree, elsewhere.
	overlapAlerts(t, feed(t, w, t0, b.update(false, edits(
		filepath.Join(testSrc, "shop", "api", "server.go"),
		filepath.Join(wtPath("shop", idA), "api", "server.go"),
		wtPath("shop", idB)+"-old/api/server.go",
		"/tmp/api/server.go"))))
	if len(w.Standing()) != 0 {
		t.Errorf("standing %v", w.Standing())
	}
}

// landed is r's change landed (or, with removed, its worktree removed).
func (r *rec) landed(removed bool) *rec {
	if removed {
		r.s.Workspace.State = record.WorkspaceRemoved
	} else {
		r.s.Workspace.Landed = &record.Landing{Head: r.s.Workspace.Head, Into: "main"}
	}
	return r
}

func TestOverlapStandsUntilOneLands(t *testing.T) {
	for _, lands := range []string{"the first", "the second", "the first, removed"} {
		t.Run(lands, func(t *testing.T) {
			w := NewWorkers(nil, WorkerOptions{})
			want(t, feed(t, w, t0, synced()))
			a, b := inWorktree(idA, "shop"), inWorktree(idB, "shop")
			overlapAlerts(t, feed(t, w, t0, a.edit("api/server.go")))
			overlapAlerts(t, feed(t, w, t0, b.edit("api/server.go")), "9c1d4e2f: 3f2a9c1d and 9c1d4e2f both change api/server.go: the second to land may conflict")
			done, live := a, b
			if lands == "the second" {
				done, live = b, a
			}
			at := t0.Add(time.Minute)
			// Settled, its change is still to land: the pair stands.
			want(t, feed(t, w, at, done.settle(at, record.StatusCompleted, "done", "").update(false)))
			if st := standingOverlaps(w); st["9c1d4e2f"] != 1 {
				t.Fatalf("standing %v after %s settled, its change not landed", st, lands)
			}
			want(t, feed(t, w, at, done.landed(strings.HasSuffix(lands, "removed")).update(false)))
			if st := standingOverlaps(w); len(st) != 0 {
				t.Fatalf("standing %v after %s landed", st, lands)
			}
			// Its change is in the branch now: the live one changing the
			// file again, or a newcomer, does not meet it.
			overlapAlerts(t, feed(t, w, at, live.edit("api/server.go")))
			c := inWorktree(idC, "shop")
			overlapAlerts(t, feed(t, w, at, c.edit("api/server.go")),
				"c0ffee00: "+live.s.ID[:8]+" and c0ffee00 both change api/server.go: the second to land may conflict")
		})
	}
}

func TestOverlapFromFinishedTurns(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	want(t, feed(t, w, t0, synced()))
	a, b := inWorktree(idA, "shop"), inWorktree(idB, "shop")
	// a changed the file with a shell command: no event, only its turn's
	// files when the turn ended (a follow-up keeps it live).
	overlapAlerts(t, feed(t, w, t0, a.update(false, record.Event{Type: record.EventCommand, Command: "sed -i s/a/b/ api/server.go"})))
	at := t0.Add(time.Minute)
	overlapAlerts(t, feed(t, w, at, a.endTurn(at, "api/server.go", "go.sum").update(false)))
	overlapAlerts(t, feed(t, w, at, b.edit("api/server.go")),
		"9c1d4e2f: 3f2a9c1d and 9c1d4e2f both change api/server.go: the second to land may conflict")
	// Both from turn files; the record listing the same turns again adds
	// nothing.
	overlapAlerts(t, feed(t, w, at, b.endTurn(at, "go.sum").update(false)),
		"9c1d4e2f: 3f2a9c1d and 9c1d4e2f both change go.sum: the second to land may conflict")
	overlapAlerts(t, feed(t, w, at, b.update(false)))
	overlapAlerts(t, feed(t, w, at, a.update(false)))
}

func TestOverlapOfAWorkerAlreadyRunningWhenWatchStarts(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	// Its finished turns and the events read from its running one count:
	// it is live, and they are not landed.
	a := inWorktree(idA, "shop")
	a.endTurn(t0, "api/server.go")
	b := inWorktree(idB, "shop")
	overlapAlerts(t, feed(t, w, t0, a.update(true)))
	overlapAlerts(t, feed(t, w, t0, b.update(true, edits(filepath.Join(wtPath("shop", idB), "api/server.go")))),
		"9c1d4e2f: 3f2a9c1d and 9c1d4e2f both change api/server.go: the second to land may conflict")
	// One that settled before, its change not landed, counts: landing
	// it may conflict with theirs. One landed is history.
	old := inWorktree(idC, "shop")
	old.endTurn(t0, "api/server.go").settle(t0, record.StatusCompleted, "done", "")
	overlapAlerts(t, feed(t, w, t0, old.update(true)),
		"c0ffee00: 3f2a9c1d and c0ffee00 both change api/server.go: the second to land may conflict",
		"c0ffee00: 9c1d4e2f and c0ffee00 both change api/server.go: the second to land may conflict")
	gone := inWorktree("d00d0000-0000-4000-8000-00000000000d", "shop")
	gone.endTurn(t0, "api/server.go").settle(t0, record.StatusCompleted, "done", "").landed(false)
	overlapAlerts(t, feed(t, w, t0, gone.update(true)))
}

func TestOverlapAfterAFollowUpReopensAWorker(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	want(t, feed(t, w, t0, synced()))
	a, b := inWorktree(idA, "shop"), inWorktree(idB, "shop")
	overlapAlerts(t, feed(t, w, t0, a.edit("api/server.go")))
	at := t0.Add(time.Minute)
	a.s.Turns[0].Files = []string{"api/server.go"}
	want(t, feed(t, w, at, a.settle(at, record.StatusCompleted, "done", "").landed(false).update(false)))
	overlapAlerts(t, feed(t, w, at, b.edit("api/server.go")))
	// A follow-up reopens a (landed with --keep): what it landed is in the
	// branch, what it does now counts again.
	a.s.Owner = &proc.Ref{PID: 43}
	a.startTurn(at.Add(time.Second))
	overlapAlerts(t, feed(t, w, at.Add(time.Second), a.update(false)))
	overlapAlerts(t, feed(t, w, at.Add(2*time.Second), a.edit("api/server.go")),
		"3f2a9c1d: 9c1d4e2f and 3f2a9c1d both change api/server.go: the second to land may conflict")
}

func TestOverlapPathsAgentsReport(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	want(t, feed(t, w, t0, synced()))
	a, b := inWorktree(idA, "shop"), inWorktree(idB, "shop")
	// b was spawned from the checkout's api/ directory: its agent works in
	// the worktree's api/, and a relative path starts there.
	b.s.Workspace.Subdir = "api"
	overlapAlerts(t, feed(t, w, t0, a.update(false, edits(wtPath("shop", idA)+"/./api/../api/server.go"))))
	overlapAlerts(t, feed(t, w, t0, b.update(false, edits("server.go"))),
		"9c1d4e2f: 3f2a9c1d and 9c1d4e2f both change api/server.go: the second to land may conflict")
}

func TestOverlapThroughASymlink(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"src/shop", "real/wt/a", "real/wt/b"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	w := NewWorkers(nil, WorkerOptions{})
	want(t, feed(t, w, t0, synced()))
	var recs []*rec
	for _, id := range []string{idA, idB} {
		r := inWorktree(id, "shop")
		r.s.Workspace.Repo = filepath.Join(dir, "src/shop")
		r.s.Workspace.GitDir = filepath.Join(dir, "src/shop/.git")
		// Recorded through the link; the agent reports resolved paths.
		r.s.Workspace.Path = filepath.Join(dir, "link/wt", map[string]string{idA: "a", idB: "b"}[id])
		recs = append(recs, r)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(dir, "real"))
	if err != nil {
		t.Fatal(err)
	}
	overlapAlerts(t, feed(t, w, t0, recs[0].update(false, edits(filepath.Join(real, "wt/a/main.go")))))
	overlapAlerts(t, feed(t, w, t0, recs[1].update(false, edits(filepath.Join(dir, "link/wt/b/main.go")))),
		"9c1d4e2f: 3f2a9c1d and 9c1d4e2f both change main.go: the second to land may conflict")
}

func TestOverlapWithWorkersInPlace(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	want(t, feed(t, w, t0, synced()))
	checkout := filepath.Join(testSrc, "shop")
	// In place in the repository's checkout (from its api/ directory):
	// its edits are the checkout's files, which a worktree's change lands
	// in.
	p := workingInPlace(idA, filepath.Join(checkout, "api"))
	overlapAlerts(t, feed(t, w, t0, p.update(false, edits(filepath.Join(checkout, "api/server.go"), "util.go"))))
	b := inWorktree(idB, "shop")
	overlapAlerts(t, feed(t, w, t0, b.edit("api/server.go", "api/util.go")),
		"9c1d4e2f: 3f2a9c1d and 9c1d4e2f both change api/server.go: 3f2a9c1d edits it in place, so landing 9c1d4e2f there may be refused or conflict",
		"9c1d4e2f: 3f2a9c1d and 9c1d4e2f both change api/util.go: 3f2a9c1d edits it in place, so landing 9c1d4e2f there may be refused or conflict")
	// Two in place on one file overwrite each other; in place elsewhere
	// (another clone) is another file.
	q := workingInPlace(idC, filepath.Join(checkout, "api"))
	overlapAlerts(t, feed(t, w, t0, q.update(false, edits("./server.go"))),
		"c0ffee00: 3f2a9c1d and c0ffee00 both change server.go, both in place: each may overwrite the other's edits",
		"c0ffee00: 9c1d4e2f and c0ffee00 both change api/server.go: c0ffee00 edits it in place, so landing 9c1d4e2f there may be refused or conflict")
	clone := workingInPlace("d0000000-0000-4000-8000-00000000000d", "/zwarm-overlap-test/clone/shop")
	overlapAlerts(t, feed(t, w, t0, clone.update(false, edits("api/server.go"))))
	// In place with no directory recorded: its relative paths say nothing.
	none := workingInPlace("e0000000-0000-4000-8000-00000000000e", "")
	overlapAlerts(t, feed(t, w, t0, none.update(false, edits("server.go"))))
}

func TestOverlapForgetsSettledAndRemovedWorkers(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	want(t, feed(t, w, t0, synced()))
	a, b, c := inWorktree(idA, "shop"), inWorktree(idB, "shop"), inWorktree(idC, "shop")
	for _, r := range []*rec{a, b, c} {
		feed(t, w, t0, r.edit("api/server.go", "go.mod"))
	}
	if st := standingOverlaps(w); st["9c1d4e2f"] != 2 || st["c0ffee00"] != 4 {
		t.Fatalf("standing %v", st)
	}
	// Removed (zwarm rm) while running: gone, with the alerts about it.
	want(t, feed(t, w, t0, watch.Update{ID: idA, Removed: true}))
	if st := standingOverlaps(w); len(st) != 1 || st["c0ffee00"] != 2 {
		t.Fatalf("standing %v", st)
	}
	want(t, feed(t, w, t0, b.settle(t0, record.StatusCompleted, "done", "").landed(false).update(false)))
	want(t, feed(t, w, t0, c.settle(t0, record.StatusFailed, "", "boom").landed(true).update(false)), "failure")
	if len(w.ov.live)+len(w.ov.files)+len(w.ov.told) != 0 || len(standingOverlaps(w)) != 0 {
		t.Errorf("left behind: live %v files %v told %v standing %v", w.ov.live, w.ov.files, w.ov.told, w.Standing())
	}
}

func TestOverlapDisabled(t *testing.T) {
	cfg, _, err := loadConfig(t, "[watchers.overlap]\nenabled = false\npriority = 7\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Overlap.Enabled || cfg.Overlap.Priority != 7 || !DefaultConfig().Overlap.Enabled {
		t.Fatalf("overlap config %+v", cfg.Overlap)
	}
	w := NewWorkers(cfg, WorkerOptions{})
	a, b := inWorktree(idA, "shop"), inWorktree(idB, "shop")
	overlapAlerts(t, feed(t, w, t0, a.edit("api/server.go")))
	overlapAlerts(t, feed(t, w, t0, b.edit("api/server.go")))
	if len(w.ov.live) != 0 {
		t.Errorf("a disabled watcher keeps %v", w.ov.live)
	}
}

// The alert reaches Alerts, which zwarm watch, a run and the dashboard
// read.
func TestOverlapAlertIsDelivered(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Stall.Enabled = false // its timers run on the wall clock
	w := NewWorkers(cfg, WorkerOptions{})
	a, b := inWorktree(idA, "shop"), inWorktree(idB, "shop")
	updates := make(chan watch.Update, 4)
	updates <- a.update(true)
	updates <- b.update(true)
	updates <- a.edit("api/server.go")
	updates <- b.edit("api/server.go")
	close(updates)
	if err := w.Run(context.Background(), updates); err != nil {
		t.Fatal(err)
	}
	var got []Alert
	for al := range w.Alerts() {
		got = append(got, al)
	}
	overlapAlerts(t, got, "9c1d4e2f: 3f2a9c1d and 9c1d4e2f both change api/server.go: the second to land may conflict")
}

// Two workers that each ran one turn changing the same file with a shell
// command (echo > shared.txt): no file_change event, only each turn's
// files, recorded as it ends, which is when each settles. The second to
// end meets the first, whose change is still to land.
func TestOverlapOfShellEditsOfWorkersThatRanOneTurnEach(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	want(t, feed(t, w, t0, synced()))
	a, b := inWorktree(idA, "shop"), inWorktree(idB, "shop")
	shell := record.Event{Type: record.EventCommand, Command: "echo mine > shared.txt"}
	overlapAlerts(t, feed(t, w, t0, a.update(false, shell)))
	overlapAlerts(t, feed(t, w, t0, b.update(false, shell)))
	at := t0.Add(time.Minute)
	a.s.Turns[0].Files = []string{"shared.txt"}
	overlapAlerts(t, feed(t, w, at, a.settle(at, record.StatusCompleted, "done", "").update(false)))
	b.s.Turns[0].Files = []string{"shared.txt"}
	overlapAlerts(t, feed(t, w, at, b.settle(at, record.StatusCompleted, "done", "").update(false)),
		"9c1d4e2f: 3f2a9c1d and 9c1d4e2f both change shared.txt: the second to land may conflict")
}

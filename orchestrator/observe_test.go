package orchestrator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/orchestrator/tools"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// A worker's end is news until an observation announcing it reached the
// model: a call that failed does not count.
func TestObservationNewsUntilAnnounced(t *testing.T) {
	end := time.Now().UTC()
	w := new(sessionstest.WithStatus(record.Session{ID: "3f2a1c9d-0000-4000-8000-000000000001", Turn: 1, EndedAt: &end, Error: "tests fail"}, record.StatusFailed))
	r := &Run{rec: &runs.Record{}, set: Settings{Limits: runs.Limits{MaxSteps: 10}}, seen: tools.NewSeen(nil),
		workers: []*record.Session{w}, started: time.Now(), resumed: true}
	first, marks := r.observe(3)
	again, _ := r.observe(3)
	for _, text := range []string{first, again} {
		if !strings.Contains(text, "has been resumed") || !strings.Contains(text, w.ID+" failed (turn 1): tests fail") {
			t.Fatalf("observation %q", text)
		}
	}
	r.announced(marks)
	third, _ := r.observe(4)
	if strings.Contains(third, w.ID) || strings.Contains(third, "resumed") {
		t.Fatalf("announced news repeated: %q", third)
	}
	if !strings.HasPrefix(third, "[zwarm observation] Step 4 of 10.") || !strings.Contains(third, "Workers: 0 running") {
		t.Errorf("observation %q", third)
	}
	// A follow-up that ends again is news again.
	later := end.Add(time.Minute)
	w.EndedAt = &later
	if fourth, _ := r.observe(5); !strings.Contains(fourth, w.ID) {
		t.Errorf("a new end was not news: %q", fourth)
	}
}

// The observation names each worktree's change: its files until it is
// landed, a bounded number of workers.
func TestObservationListsWorktreeChanges(t *testing.T) {
	end := time.Now().UTC()
	id := func(n int) string { return fmt.Sprintf("%08x-0000-4000-8000-000000000000", n) }
	ws := func(head string, stat workspace.Stat) *record.Workspace {
		return &record.Workspace{Branch: "zwarm/x", BaseCommit: "base", Head: head, State: record.WorkspaceReady, Changes: &stat}
	}
	landed := ws("h2", workspace.Stat{Files: 1, Added: 1})
	landed.Landed = &record.Landing{Into: "main", Head: "h2", Commit: "c2"}
	workers := []*record.Session{
		new(sessionstest.WithStatus(record.Session{ID: id(1), EndedAt: &end, Workspace: ws("h1", workspace.Stat{Files: 7, Added: 70})}, record.StatusCompleted)),
		new(sessionstest.WithStatus(record.Session{ID: id(2), EndedAt: &end, Workspace: landed}, record.StatusCompleted)),
		new(sessionstest.WithStatus(record.Session{ID: id(3), Workspace: ws("base", workspace.Stat{})}, record.StatusRunning)),
		new(sessionstest.WithStatus(record.Session{ID: id(4), EndedAt: &end}, record.StatusCompleted)), // in place: not listed
	}
	for n := 5; n < 20; n++ {
		workers = append(workers, new(sessionstest.WithStatus(record.Session{ID: id(n), EndedAt: &end, Workspace: ws("h", workspace.Stat{})}, record.StatusCompleted)))
	}
	files := map[string]changedFiles{id(1): {key: "base..h1", names: []string{"a", "b", "c", "d", "e", "f", "g"}}}
	line := changesLine(workers, files)
	for _, want := range []string{
		"00000001 +70 -0 in 7 files: a, b, c, d, e and 2 more, not landed; 00000002 landed into main; 00000003 no changes (running); ",
		"00000005 no changes; ", "; and 6 more (list_sessions).",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("line lacks %q:\n%s", want, line)
		}
	}
	if strings.Contains(line, "00000004") {
		t.Errorf("a worker in place is listed: %s", line)
	}
	// Files read for another state of the change are not shown.
	files[id(1)] = changedFiles{key: "base..old", names: []string{"stale"}}
	if line := changesLine(workers, files); strings.Contains(line, "stale") || !strings.Contains(line, "00000001 +70 -0 in 7 files, not landed") {
		t.Errorf("stale files: %s", line)
	}
	if changesLine(workers[3:4], nil) != "" {
		t.Error("a line for workers in place")
	}
}

// The last steps are counted down in words a model reads right.
func TestObservationCountsDownTheLastSteps(t *testing.T) {
	r := &Run{rec: &runs.Record{}, set: Settings{Limits: runs.Limits{MaxSteps: 10}}, seen: tools.NewSeen(nil), started: time.Now()}
	for step, want := range map[int]string{
		6:  "Step 6 of 10. Time:",
		7:  "Step 7 of 10. Only 3 steps left after this one: wrap up.",
		9:  "Step 9 of 10. Only 1 step left after this one: wrap up.",
		10: "Step 10 of 10. This is the last step: wrap up.",
	} {
		if got, _ := r.observe(step); !strings.Contains(got, want) {
			t.Errorf("step %d: %q", step, got)
		}
	}
}

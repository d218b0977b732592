package sessionstest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// SessionID is the i-th of a run of valid session ids, in creation order.
func SessionID(i int) string {
	return fmt.Sprintf("%08x-%04x-4000-8000-%012x", 0x3f2a0000+i, i%0xffff, i)
}

// WriteSettledRecord writes the record of a finished session of two turns,
// created i minutes into the day, as zwarm writes it.
func WriteSettledRecord(t testing.TB, st *state.Store, i int) {
	t.Helper()
	id := SessionID(i)
	if err := os.MkdirAll(filepath.Join(st.SessionDir(id), "turns"), 0o700); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	code, cost := 0, 0.0033*float64(i%7)
	s := &record.Session{Version: record.SchemaVersion, ID: id, Task: fmt.Sprintf("task %d", i),
		Adapter: "codex", Model: "gpt-5.1-codex-mini", WorkingDir: "/srv/project", Source: record.UserSource,
		CreatedAt: created, UpdatedAt: created.Add(3 * time.Minute), LastMessage: fmt.Sprintf("done %d", i)}
	statusfield.Set(s, record.StatusCompleted)
	for n := 1; n <= 2; n++ {
		end := created.Add(time.Duration(n) * time.Minute)
		u := record.Usage{InputTokens: int64(1000 * n), OutputTokens: int64(10 * i), TotalTokens: int64(1000*n + 10*i)}
		s.Turns = append(s.Turns, statusfield.With(record.Turn{N: n, Prompt: s.Task, StartedAt: end.Add(-time.Minute), EndedAt: &end,
			ExitCode: &code, Usage: u, CostUSD: &cost}, record.StatusCompleted))
		s.Usage = s.Usage.Add(u)
	}
	end := created.Add(2 * time.Minute)
	s.EndedAt, s.ExitCode, s.Turn, s.CostUSD = &end, &code, 2, &cost
	s.Turns[1].Denied, s.Denied = i%5, i%5
	if i%3 != 0 { // most in a worktree, in every state a listing shows
		ws := &record.Workspace{Repo: "/srv/project", GitDir: "/srv/project/.git", Origin: "/srv/project", Subdir: "api",
			Path: "/data/zwarm/worktrees/project-1a2b3c4d/" + id, Branch: "zwarm/" + id, Base: "main", BaseBranch: i%2 == 0,
			BaseCommit: fmt.Sprintf("%040d", i), Head: fmt.Sprintf("%040d", i+1), State: record.WorkspaceReady,
			Changes: &workspace.Stat{Files: i % 4, Added: i, Deleted: i / 2}, Brought: []string{".env"}, Committed: i % 3}
		switch i % 4 {
		case 1:
			ws.Landed = &record.Landing{Commit: fmt.Sprintf("%040d", i+2), Into: "main", Strategy: workspace.Squash, At: end, Head: ws.Head}
			ws.State = record.WorkspaceRemoved
		case 2:
			ws.Conflict = []string{"a.go", "b/c.go"}
		case 3:
			ws.WithChanges, ws.Error, ws.Changes = true, "turn 2's work is not committed", nil
		}
		if i%7 == 2 { // landed before, then given a follow-up
			ws.Earlier = []record.Landing{{Commit: fmt.Sprintf("%040d", i+3), Into: "main", Strategy: workspace.Merge, At: created.Add(time.Minute), Head: ws.BaseCommit}}
		}
		s.Workspace = ws
	}
	if i%5 == 1 { // some were started with a role's settings
		s.Role, s.ReasoningEffort, s.Instructions, s.MaxCostUSD = "reviewer", "high", fmt.Sprintf("Review %d; change nothing.", i), 0.25*float64(i%3+1)
	}
	if i%4 == 0 { // some ran as cluster jobs
		s.Job = &record.Job{Runner: "slurm", ID: fmt.Sprint(1000 + i)}
	}
	if err := st.Save(s); err != nil {
		t.Fatal(err)
	}
}

// Fingerprint is what a listing shows of a session.
func Fingerprint(s *record.Session) string {
	cost := -1.0
	if s.CostUSD != nil {
		cost = *s.CostUSD
	}
	ws, _ := json.Marshal(s.Workspace)
	job, _ := json.Marshal(s.Job)
	return fmt.Sprintf("%s %s turn %d %q %q %d tokens $%.4f %s denied %d %q %s %s role %q %q %q $%g", s.ID, s.Status(), s.Turn, s.Task, s.LastMessage,
		s.Usage.TotalTokens, cost, s.CreatedAt.Format(time.RFC3339), s.Denied, s.ChangesText(), ws, job,
		s.Role, s.ReasoningEffort, s.Instructions, s.MaxCostUSD)
}

// RecordsOnDisk is the listing made the slow way: every record read and
// decoded, newest first.
func RecordsOnDisk(t testing.TB, st *state.Store, skip string) []string {
	t.Helper()
	ents, err := os.ReadDir(st.SessionsDir())
	if err != nil {
		t.Fatal(err)
	}
	var list []*record.Session
	for _, e := range ents {
		if e.Name() == skip || !e.IsDir() {
			continue
		}
		s, err := st.Load(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, s)
	}
	record.SortNewestFirst(list)
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = Fingerprint(s)
	}
	return out
}

// FirstDiff says where two listings first differ.
func FirstDiff(got, want []string) string {
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("#%d\n got  %s\n want %s", i, g, w)
		}
	}
	return "none"
}

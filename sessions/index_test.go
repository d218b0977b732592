package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// The listing cache is never the source of truth: missing, current, stale
// after a change, truncated or garbage, a listing says what the records
// say, and reports the record it cannot read every time.
func TestListingAgreesWithTheRecordsWhateverTheCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := state.NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(ManagerOptions{Store: st})
	ctx := context.Background()
	const n = 2*loadBatch + 17 // several batches, read in parallel
	for i := range n {
		writeSettledRecord(t, st, i)
	}
	corrupt := "3f2affff-0000-4000-8000-000000000000"
	os.MkdirAll(st.SessionDir(corrupt), 0o700)
	os.WriteFile(st.MetaPath(corrupt), []byte(`{"version":1,"id":`), 0o600)
	settle := func() { // as in a state dir in use: no change within the racy window
		old := time.Now().Add(-time.Minute)
		os.Chtimes(st.SessionsDir(), old, old)
	}
	settle()

	check := func(when string) {
		t.Helper()
		list, err := m.List(ctx, ListOptions{})
		var le *ListError
		if !errors.As(err, &le) || len(le.Records) != 1 || le.Records[0].ID != corrupt {
			t.Fatalf("%s: the corrupt record is not reported alone: %v", when, err)
		}
		got := make([]string, len(list))
		for i, s := range list {
			got[i] = fingerprint(s)
		}
		if want := recordsOnDisk(t, st, corrupt); !slices.Equal(got, want) {
			t.Fatalf("%s: %d sessions listed, %d recorded; first difference:\n%s", when, len(got), len(want), firstDiff(got, want))
		}
	}
	check("no cache")
	if _, err := os.Stat(indexPath(st)); err != nil {
		t.Fatalf("the first listing left no cache: %v", err)
	}
	check("cache current")

	// A settled record changed the way a follow-up changes one.
	changed := sessionID(n / 2)
	_, err = st.UpdateSettled(context.Background(), changed, func(s *record.Session) error {
		s.LastMessage, s.Task = "changed after the cache was written", "a new task"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check("a settled record changed")

	if _, err := m.Remove(ctx, sessionID(3), false); err != nil {
		t.Fatal(err)
	}
	check("a session removed")
	settle()
	writeSettledRecord(t, st, n+5)
	check("a session added")
	settle()
	check("cache current again")

	whole, err := os.ReadFile(indexPath(st))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{
		"cache truncated":  whole[:len(whole)/2],
		"cache empty":      nil,
		"cache is garbage": []byte("ZWIX\x01\x00\x00\x00 not a cache at all"),
		"cache of another": append([]byte("XXXX"), whole[4:]...),
	} {
		if err := os.WriteFile(indexPath(st), body, 0o600); err != nil {
			t.Fatal(err)
		}
		check(name)
		check(name + ", then rebuilt")
	}
}

func sessionID(i int) string {
	return fmt.Sprintf("%08x-%04x-4000-8000-%012x", 0x3f2a0000+i, i%0xffff, i)
}

// writeSettledRecord writes the record of a finished session of two turns,
// created i minutes into the day, as zwarm writes it.
func writeSettledRecord(t *testing.T, st *state.Store, i int) {
	t.Helper()
	id := sessionID(i)
	if err := os.MkdirAll(filepath.Join(st.SessionDir(id), "turns"), 0o700); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	code, cost := 0, 0.0033*float64(i%7)
	s := &record.Session{Version: record.SchemaVersion, ID: id, Status: record.StatusCompleted, Task: fmt.Sprintf("task %d", i),
		Adapter: "codex", Model: "gpt-5.1-codex-mini", WorkingDir: "/srv/project", Source: record.UserSource,
		CreatedAt: created, UpdatedAt: created.Add(3 * time.Minute), LastMessage: fmt.Sprintf("done %d", i)}
	for n := 1; n <= 2; n++ {
		end := created.Add(time.Duration(n) * time.Minute)
		u := record.Usage{InputTokens: int64(1000 * n), OutputTokens: int64(10 * i), TotalTokens: int64(1000*n + 10*i)}
		s.Turns = append(s.Turns, record.Turn{N: n, Prompt: s.Task, StartedAt: end.Add(-time.Minute), EndedAt: &end,
			ExitCode: &code, Status: record.StatusCompleted, Usage: u, CostUSD: &cost})
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

// fingerprint is what a listing shows of a session.
func fingerprint(s *record.Session) string {
	cost := -1.0
	if s.CostUSD != nil {
		cost = *s.CostUSD
	}
	ws, _ := json.Marshal(s.Workspace)
	job, _ := json.Marshal(s.Job)
	return fmt.Sprintf("%s %s turn %d %q %q %d tokens $%.4f %s denied %d %q %s %s role %q %q %q $%g", s.ID, s.Status, s.Turn, s.Task, s.LastMessage,
		s.Usage.TotalTokens, cost, s.CreatedAt.Format(time.RFC3339), s.Denied, s.ChangesText(), ws, job,
		s.Role, s.ReasoningEffort, s.Instructions, s.MaxCostUSD)
}

// recordsOnDisk is the listing made the slow way: every record read and
// decoded, newest first.
func recordsOnDisk(t *testing.T, st *state.Store, skip string) []string {
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
	SortNewestFirst(list)
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fingerprint(s)
	}
	return out
}

func firstDiff(got, want []string) string {
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

// A meta.json changed behind zwarm's back (rewritten in place, even with
// its size and modification time put back) is read again, not taken from
// the listing cache: a broken one is reported as broken on every listing,
// as it is without the cache, and clean leaves it alone.
func TestListingSeesARecordBrokenBehindItsBack(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(path string, before os.FileInfo) error
	}{
		{"cut short in place", func(path string, _ os.FileInfo) error {
			return os.WriteFile(path, []byte(`{"version":1,"id":`), 0o600)
		}},
		{"overwritten, size and modification time put back", func(path string, before os.FileInfo) error {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			if _, err := f.WriteAt([]byte(strings.Repeat("x", int(before.Size()))), 0); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			return os.Chtimes(path, before.ModTime(), before.ModTime())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := state.NewStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			m := NewManager(ManagerOptions{Store: st})
			ctx := context.Background()
			for _, i := range []int{0, 3, 6} { // no worktrees: clean removes them outright
				writeSettledRecord(t, st, i)
			}
			old := time.Now().Add(-time.Minute)
			os.Chtimes(st.SessionsDir(), old, old) // a state dir in use: its directory is trusted
			for range 2 {
				if list, err := m.List(ctx, ListOptions{}); err != nil || len(list) != 3 {
					t.Fatalf("before: %d sessions, %v", len(list), err)
				}
			}
			broken := sessionID(3)
			meta := st.MetaPath(broken)
			before, err := os.Stat(meta)
			if err != nil {
				t.Fatal(err)
			}
			nextClockTick(t, meta)
			if err := tc.corrupt(meta, before); err != nil {
				t.Fatal(err)
			}
			for _, when := range []string{"first listing", "second listing"} {
				list, err := m.List(ctx, ListOptions{})
				var le *ListError
				if !errors.As(err, &le) || len(le.Records) != 1 || le.Records[0].ID != broken {
					t.Fatalf("%s: the broken record is not reported: %v", when, err)
				}
				for _, s := range list {
					if s.ID == broken {
						t.Fatalf("%s: the broken record is listed as %s", when, s.Status)
					}
				}
				if len(list) != 2 {
					t.Fatalf("%s: %d sessions listed, want the 2 whole ones", when, len(list))
				}
			}
			res, err := m.Clean(ctx, CleanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(res.Removed, broken) {
				t.Fatalf("clean removed the broken record: %v", res.Removed)
			}
			if _, err := os.Stat(meta); err != nil {
				t.Fatalf("clean deleted the broken record: %v", err)
			}
			if len(res.Removed) != 2 {
				t.Fatalf("clean removed %v, want the 2 whole sessions", res.Removed)
			}
		})
	}
}

// nextClockTick waits until the file system's clock has moved past the
// change time of path, so that a change made now gets a different one
// (the kernel stamps files from a clock that advances in ticks).
func nextClockTick(t *testing.T, path string) {
	t.Helper()
	var was unix.Stat_t
	if err := unix.Stat(path, &was); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(filepath.Dir(path), ".tick")
	defer os.Remove(probe)
	for {
		if err := os.WriteFile(probe, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		var now unix.Stat_t
		if err := unix.Stat(probe, &now); err != nil {
			t.Fatal(err)
		}
		if now.Ctim.Nano() > was.Ctim.Nano() {
			return
		}
		runtime.Gosched()
	}
}

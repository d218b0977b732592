package cli

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// The hand-written listing JSON is encoding/json's, byte for byte, for
// every shape a session can take.
func TestListJSONIsEncodingJSONs(t *testing.T) {
	at := time.Date(2026, 11, 2, 1, 39, 0, 123456789, time.UTC)
	later := at.Add(90 * time.Second)
	code, minus := 0, -9
	costs := []float64{0, 0.0066, 1e-7, 2.5e21, 123456789.25, 3}
	var list []*record.Session
	for i, text := range []string{"", "plain", `say "hi" \ there`, "<b>&amp;</b>", "tab\tnew\nline\r\x01\x7f", "ünïcödé ✓", "bad \xff utf8", "sep\u2028\u2029"} {
		s := new(sessionstest.WithStatus(record.Session{ID: "3f2a0000-0000-4000-8000-00000000000" + string(rune('0'+i)), Task: text,
			Adapter: "codex", Model: text, WorkingDir: "/w/" + text, Source: record.UserSource, CreatedAt: at, UpdatedAt: later,
			LastMessage: text, Error: text, ThreadID: text, PID: 1000 + i, Turn: i, PendingInjects: i % 2, Denied: i % 3,
			Usage: record.Usage{InputTokens: int64(i) * 1000, CachedInputTokens: 7, OutputTokens: -1, TotalTokens: math.MaxInt64}}, record.StatusCompleted))
		if i%2 == 0 {
			s.EndedAt, s.ExitCode, s.Sandbox = &later, &code, "workspace-write"
			s.Usage.CacheWriteInputTokens = 42
		} else {
			s.LastEventAt, s.ExitCode, s.Source = &at, &minus, record.RunSource("0199a213-81c0-7800-8aa1-bbab2a035a53")
		}
		if i < len(costs) {
			c := costs[i]
			s.CostUSD = &c
		}
		if i%3 == 2 {
			s.Role, s.ReasoningEffort, s.Instructions, s.MaxCostUSD = "reviewer", "high", text, 0.25*float64(i)
		}
		if i%3 == 1 {
			s.Job, s.RunnerState = &record.Job{Runner: "slurm", ID: "12" + text}, "queued · slurm 12 ("+text+")"
			if i > 1 {
				s.Job.Resources = map[string]string{"time": "2h", "gres": text, "cpus": "4"}
				s.Accounting = []record.JobAccount{{ID: "12", Node: text, Elapsed: 130, MaxRSS: 3 << 30, CPUs: 4, ExitCode: "0:0", State: "COMPLETED"}}
			}
		}
		switch i % 4 {
		case 1:
			s.Workspace = &record.Workspace{Path: "/wt/" + text, Branch: "zwarm/x", Base: "main", BaseCommit: "abc",
				Changes: &workspace.Stat{Files: 2, Added: 10, Deleted: 3}, State: record.WorkspaceReady,
				Earlier: []record.Landing{{Commit: "abc", Into: text, Strategy: workspace.Merge, At: at}}}
		case 2:
			s.Workspace = &record.Workspace{Path: "/wt", Conflict: []string{"a.go", text}, State: record.WorkspaceReady}
		case 3:
			s.Workspace = &record.Workspace{Path: "/wt", State: record.WorkspaceRemoved,
				Landed: &record.Landing{Commit: "def", Into: "main", Strategy: workspace.Squash, At: later}}
			s.Turns = []record.Turn{sessionstest.WithStatus(record.Turn{N: 1, Prompt: text, StartedAt: at, EndedAt: &later, ExitCode: &code,
				Files: []string{"x.go"}}, record.StatusCompleted), {N: 2, Prompt: "again", StartedAt: later}}
		}
		list = append(list, s)
	}
	var many []*record.Session // several chunks, encoded apart
	for len(many) < 3*jsonChunk+5 {
		many = append(many, list...)
	}
	for _, l := range [][]*record.Session{nil, list[:1], list, many[:jsonChunk], many} {
		var want, got bytes.Buffer
		if err := WriteJSONValue(&want, ListJSON(l)); err != nil {
			t.Fatal(err)
		}
		if err := WriteListJSON(&got, l); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			g, w := got.Bytes(), want.Bytes()
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Fatalf("%d sessions: differs at byte %d:\n got  %q\n want %q", len(l), i, g[max(0, i-80):min(len(g), i+80)], w[max(0, i-80):min(len(w), i+80)])
		}
	}
	nan := math.NaN()
	list[0].CostUSD = &nan
	var got bytes.Buffer
	if err := WriteListJSON(&got, list[:1]); err == nil {
		t.Fatal("a NaN cost was written")
	}
}

// A listed session with nothing in its lists (as the listing cache gives
// most) is encoded with one allocation, its CHANGES text: at 100,000
// sessions the seven it made were a collection more of the listing's live
// heap.
func TestListJSONAllocatesLittleForAPlainSession(t *testing.T) {
	at := time.Date(2026, 11, 2, 1, 39, 0, 0, time.UTC)
	cost := 0.0066
	s := new(sessionstest.WithStatus(record.Session{ID: "3f2a0000-0000-4000-8000-000000000000", Task: "fix it", Adapter: "codex",
		Model: "gpt-5.1-codex-mini", WorkingDir: "/w", Source: record.UserSource, CreatedAt: at, UpdatedAt: at, EndedAt: &at,
		CostUSD: &cost, Workspace: &record.Workspace{Path: "/wt", Branch: "zwarm/x", Base: "main", State: record.WorkspaceReady,
			Changes: &workspace.Stat{Files: 1, Added: 2}}}, record.StatusCompleted))
	b := make([]byte, 0, 4096)
	var err error
	if n := testing.AllocsPerRun(20, func() { b, err = appendSessionJSON(b[:0], ToJSON(s)) }); n > 1 || err != nil {
		t.Errorf("%v allocations a session (%v), want one", n, err)
	}
}

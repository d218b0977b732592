package sessionlist

import (
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/tui/common"
)

// A session whose supervisor runs as a cluster's job shows where the job
// is, in the runner's words, made safe for the terminal.
func TestStatusSaysWhereARemoteJobIs(t *testing.T) {
	m := New(common.New())
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	m.SetNow(now)
	s := new(sessionstest.WithStatus(record.Session{ID: "0f1e2d3c-0000-4000-8000-000000000001", CreatedAt: now,
		Job: &record.Job{Runner: "slurm", ID: "1234"}, RunnerState: "queued · slurm 1234 (Resources)\x1b[2J"}, record.StatusPending))
	got := m.status(s, true)
	if !strings.Contains(got, "pending · queued · slurm 1234 (Resources)") || strings.Contains(got, "\x1b") {
		t.Fatalf("status cell %q", got)
	}
	s.RunnerState = "queued · slurm 1234 (Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions)"
	if got := m.status(s, true); len([]rune(got)) > 60 || !strings.HasSuffix(got, "…") {
		t.Fatalf("a long queue reason takes %d cells: %q", len([]rune(got)), got)
	}
	local := new(sessionstest.WithStatus(record.Session{ID: s.ID, CreatedAt: now}, record.StatusRunning))
	if got := m.status(local, true); strings.Contains(got, "slurm") || strings.Contains(got, " · ") {
		t.Fatalf("a local session's status cell %q", got)
	}
}

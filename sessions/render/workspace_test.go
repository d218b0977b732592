package render

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// A session landed, then given a follow-up, says where its change went
// before what the follow-ups changed; at most the last three landings.
func TestEarlierLandingsAreShown(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	landing := func(i int) record.Landing {
		return record.Landing{Commit: fmt.Sprintf("c%07d%032d", i, 0), Into: "main\x1b[2J", Strategy: workspace.Squash, At: now.Add(-time.Duration(10-i) * time.Minute)}
	}
	s := &record.Session{ID: "9452f5f0-c1fe-4e9f-8364-f18b8e27c0f0", Workspace: &record.Workspace{Path: "/wt", Branch: "zwarm/x", Base: "main",
		State: record.WorkspaceReady, Changes: &workspace.Stat{Files: 1, Added: 2}, Earlier: []record.Landing{landing(1)}}}
	field := func() string {
		for _, f := range WorkspaceFields(s, now) {
			if f.Name == "landed" {
				return f.Text
			}
		}
		return ""
	}
	if got, want := field(), `earlier: into main\x1b[2J as c0000001 (9m ago); the changes above came after`; got != want {
		t.Errorf("one earlier landing:\n got %q\nwant %q", got, want)
	}
	for i := 2; i <= 5; i++ {
		s.Workspace.Earlier = append(s.Workspace.Earlier, landing(i))
	}
	if got := field(); !strings.HasPrefix(got, "earlier, 5 times; the last three into main") || strings.Contains(got, "c0000002") || !strings.Contains(got, "c0000005 (5m ago)") {
		t.Errorf("five earlier landings: %q", got)
	}
	s.Workspace.Earlier = nil
	if got := field(); got != "" {
		t.Errorf("never landed before: %q", got)
	}
}

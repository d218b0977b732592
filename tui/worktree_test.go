package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/workspace"
	"github.com/zwarm/zwarm/tui/common"
	"github.com/zwarm/zwarm/tui/sessionlist"
)

// changeStates are sessions in each state the CHANGES column tells apart.
func changeStates() []*record.Session {
	stat := func(files, added, deleted int) *workspace.Stat {
		return &workspace.Stat{Files: files, Added: added, Deleted: deleted}
	}
	ready := func(st *workspace.Stat) *record.Workspace {
		return &record.Workspace{Branch: "zwarm/x", State: record.WorkspaceReady, Head: "h2", Changes: st}
	}
	landed := ready(stat(2, 12, 3))
	landed.Landed = &record.Landing{Commit: "c0ffee", Into: "main", Head: "h2"}
	conflict := ready(stat(1, 4, 4))
	conflict.Conflict = []string{"go.mod"}
	cases := []struct {
		task   string
		ws     *record.Workspace
		denied int
	}{
		{"add the rate limiter", ready(stat(5, 120, 8)), 0},
		{"fix the flaky test", landed, 0},
		{"bump go.mod", conflict, 0},
		{"edit in my checkout", nil, 0},
		{"just spawned", &record.Workspace{State: record.WorkspacePreparing}, 0},
		{"only read the code", ready(stat(0, 0, 0)), 2},
		{"first turn still running", ready(nil), 0},
		{"setup failed", &record.Workspace{State: record.WorkspaceFailed, Error: "npm ci: exit 1"}, 0},
	}
	var out []*record.Session
	for i, c := range cases {
		created := clock.Add(-time.Duration(i+1) * time.Minute)
		end := created.Add(30 * time.Second)
		out = append(out, new(sessionstest.WithStatus(record.Session{ID: fixtureID(i + 1), Task: c.task,
			Adapter: "codex", Model: "gpt-5.1-codex", Source: record.UserSource, CreatedAt: created, EndedAt: &end,
			Turn: 1, Usage: record.Usage{TotalTokens: 1500}, Workspace: c.ws, Denied: c.denied}, record.StatusCompleted)))
	}
	return out
}

// The CHANGES column in each state, at the widths where columns give way:
// whole at 120 columns, without its words at 80, gone at 60.
func TestChangesColumnGoldens(t *testing.T) {
	states := []string{"landed", "conflict", "in place", "preparing", "no changes", "–", "no worktree"}
	for _, c := range []struct {
		width        int
		want, absent []string
	}{
		{120, append([]string{"CHANGES", "+120 -8 in 5 files", "✓ completed · 2 denied"}, states...), nil},
		{80, append([]string{"CHANGES", "+120 -8 "}, states...), []string{"in 5 files", "denied"}},
		{60, nil, []string{"CHANGES", "+120", "landed"}},
	} {
		t.Run(fmt.Sprintf("sessionlist_%dx9", c.width), func(t *testing.T) {
			l := sessionlist.New(common.New())
			l.SetNow(clock)
			l.SetSize(c.width, 9)
			l.SetFocused(true)
			l.Replace(changeStates())
			v := l.View()
			for _, w := range c.want {
				if !strings.Contains(v, w) {
					t.Errorf("%q missing", w)
				}
			}
			for _, w := range c.absent {
				if strings.Contains(v, w) {
					t.Errorf("%q shown", w)
				}
			}
			golden.RequireEqual(t, []byte(v))
		})
	}
}

// A filter finds sessions by what became of their change.
func TestFilterByChanges(t *testing.T) {
	l := sessionlist.New(common.New())
	l.SetNow(clock)
	l.SetSize(120, 12)
	l.Replace(changeStates())
	l.SetFilter("landed")
	if v := l.View(); !strings.Contains(v, "fix the flaky test") || strings.Contains(v, "add the rate limiter") {
		t.Fatalf("filter landed:\n%s", v)
	}
}

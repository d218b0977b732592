package tui

import (
	"context"
	"fmt"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
	"github.com/zwarm/zwarm/tui/common"
	"github.com/zwarm/zwarm/tui/detail"
	"github.com/zwarm/zwarm/tui/header"
	"github.com/zwarm/zwarm/tui/sessionlist"
)

// Each pane alone, at the widths of the two screen sizes.
func TestPaneGoldens(t *testing.T) {
	f := standard(t)
	list, err := f.m.List(context.Background(), listing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := common.New()
	for _, w := range []int{80, 120} {
		t.Run(fmt.Sprintf("header_%d", w), func(t *testing.T) {
			h := header.New(c, "/state")
			h.SetSize(w, 1)
			h.SetSessions(list)
			golden.RequireEqual(t, []byte(h.View()))
		})
		t.Run(fmt.Sprintf("sessionlist_%dx6", w), func(t *testing.T) {
			l := sessionlist.New(c)
			l.SetNow(clock)
			l.SetSize(w, 6)
			l.SetFocused(true)
			l.Replace(list)
			golden.RequireEqual(t, []byte(l.View()))
		})
		t.Run(fmt.Sprintf("detail_%dx12", w), func(t *testing.T) {
			var running *record.Session
			for _, s := range list {
				if s.Status() == record.StatusRunning {
					running = s
				}
			}
			d := detail.New(c)
			d.SetSize(w, 12)
			d.Reset(running.ID)
			_, batches, err := f.m.NewTrajectory(running.ID, watch.TrajectoryOptions{}).Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			d.Apply(watch.Update{ID: running.ID, Session: running, Initial: true, Events: batches})
			golden.RequireEqual(t, []byte(d.View()))
		})
	}
}

// The panes that show runs, alone, at the widths of the two screen sizes.
func TestRunPaneGoldens(t *testing.T) {
	f := orchestrated(t)
	list, err := f.m.List(context.Background(), listing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := runs.LoadRecord(f.dir, runID)
	if err != nil {
		t.Fatal(err)
	}
	events, err := runs.ReadEvents(f.dir, runID)
	if err != nil {
		t.Fatal(err)
	}
	c := common.New()
	for _, w := range []int{80, 120} {
		t.Run(fmt.Sprintf("header_%d", w), func(t *testing.T) {
			h := header.New(c, "/state")
			h.SetSize(w, 1)
			h.SetSessions(list)
			h.SetRuns([]*runs.Record{rec})
			golden.RequireEqual(t, []byte(h.View()))
		})
		t.Run(fmt.Sprintf("sessionlist_%dx8", w), func(t *testing.T) {
			l := sessionlist.New(c)
			l.SetNow(clock)
			l.SetSize(w, 8)
			l.SetFocused(true)
			l.Replace(list)
			l.UpsertRuns([]*runs.Record{rec}, nil)
			golden.RequireEqual(t, []byte(l.View()))
		})
		t.Run(fmt.Sprintf("detail_%dx12", w), func(t *testing.T) {
			d := detail.New(c)
			d.SetSize(w, 12)
			d.ResetRun(sessionlist.RunKey(runID), rec)
			d.SetRun(rec, 15800, money(0.03))
			d.ApplyRun(runs.Update{ID: runID, Events: events})
			golden.RequireEqual(t, []byte(d.View()))
		})
	}
}

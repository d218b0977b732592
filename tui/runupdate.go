package tui

import (
	"errors"
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/tui/keys"
)

func (m *Model) onRunSubscribed(msg runSubscribedMsg) tea.Cmd {
	if msg.err != nil {
		m.setError(fmt.Errorf("cannot follow the runs: %w", msg.err))
		if msg.feed == listFeed {
			// The sessions alone are still worth showing.
			m.runsSynced = true
			m.checkLoaded()
		}
		return nil
	}
	switch {
	case msg.feed == listFeed && m.runListSub == nil:
		m.runListSub = msg.sub
	case msg.feed == trajFeed && msg.id == m.trajID && m.runTrajSub == nil:
		m.runTrajSub = msg.sub
	default:
		return closeRunSub(msg.sub) // the selection moved on meanwhile
	}
	return nextRuns(msg.feed, msg.sub)
}

func (m *Model) onRunUpdates(msg runUpdatesMsg) tea.Cmd {
	current := m.runListSub
	if msg.feed == trajFeed {
		current = m.runTrajSub
	}
	if msg.sub != current {
		return nil // a subscription the dashboard has let go of
	}
	if msg.closed {
		if err := msg.sub.Err(); err != nil {
			m.setError(fmt.Errorf("stopped following the runs: %w; press r to reload", err))
		}
		return nil
	}
	if msg.feed == trajFeed {
		for _, u := range msg.updates {
			if u.Err != nil {
				m.setError(u.Err)
			}
			m.detail.ApplyRun(u)
		}
		return nextRuns(msg.feed, msg.sub)
	}
	var list []*runs.Record
	var removed []string
	for _, u := range msg.updates {
		switch {
		case u.Removed:
			removed = append(removed, u.ID)
		case u.Record != nil:
			list = append(list, u.Record)
		case u.Err != nil:
			m.setError(u.Err)
		}
	}
	m.list.UpsertRuns(list, removed)
	if msg.updates[len(msg.updates)-1].Synced {
		m.runsSynced = true
		m.checkLoaded()
	}
	m.header.SetRuns(m.list.Runs())
	m.refreshRunTitle()
	m.layout()
	return tea.Batch(m.followSelection(), nextRuns(msg.feed, msg.sub), m.tick())
}

// refreshRunTitle gives the detail pane the shown run's record and its
// totals with its workers, as the list has them now.
func (m *Model) refreshRunTitle() {
	id := m.detail.Run()
	if id == "" {
		return
	}
	if rec := m.list.Run(id); rec != nil {
		tokens, cost := m.list.RunTotals(id)
		m.detail.SetRun(rec, tokens, cost)
	}
}

// runRefusal says why a key that acts on sessions does nothing on a run,
// and what does what the user meant.
func runRefusal(k tea.KeyMsg, km *keys.KeyMap, r *runs.Record) error {
	id := sessions.ShortID(r.ID)
	running := r.Status == runs.StatusRunning
	switch {
	case key.Matches(k, km.Inject):
		if running || r.Status == runs.StatusCompleted {
			return fmt.Errorf("run %s takes no follow-ups: select one of its workers to send one", id)
		}
		return fmt.Errorf("run %s takes no follow-ups: zwarm orchestrate --resume %s continues it; select one of its workers to send one", id, id)
	case key.Matches(k, km.Kill) && running:
		return fmt.Errorf("run %s is stopped with Ctrl+C where it runs (zwarm orchestrate); x on one of its workers stops that worker", id)
	case key.Matches(k, km.Kill):
		return fmt.Errorf("run %s is %s; x on one of its workers stops that worker", id, r.Status)
	case key.Matches(k, km.Delete):
		return errors.New("runs are kept in the state dir; d deletes a finished session")
	case key.Matches(k, km.Diff):
		return fmt.Errorf("run %s changes nothing itself: v on one of its workers shows what that worker changed", id)
	case key.Matches(k, km.Land):
		return fmt.Errorf("run %s changes nothing itself: L on one of its workers lands what that worker changed", id)
	}
	return nil
}

func runIDs(list []*runs.Record) []string {
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = r.ID
	}
	return out
}

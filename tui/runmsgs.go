package tui

import (
	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/orchestrator/runs"
)

// Messages of the run feeds, produced by the commands below.
type (
	// runSubscribedMsg carries a new subscription to the runs.
	runSubscribedMsg struct {
		feed feed
		id   string // the selected row's key, for trajFeed
		sub  *runs.Subscription
		err  error
	}
	// runUpdatesMsg carries the updates a run subscription had ready.
	runUpdatesMsg struct {
		feed    feed
		sub     *runs.Subscription
		updates []runs.Update
		closed  bool
	}
)

// subscribeRuns starts a subscription to the runs off the UI goroutine;
// without a run source there is none.
func (m Model) subscribeRuns(f feed, opt runs.SubscribeOptions) tea.Cmd {
	src, ctx, id := m.opt.Runs, m.ctx, m.trajID
	if src == nil {
		return nil
	}
	return func() tea.Msg {
		sub, err := src(ctx, opt)
		return runSubscribedMsg{feed: f, id: id, sub: sub, err: err}
	}
}

// nextRuns waits for a run subscription's next updates and takes whatever
// else is ready with them.
func nextRuns(f feed, sub *runs.Subscription) tea.Cmd {
	return func() tea.Msg {
		u, ok := <-sub.C()
		if !ok {
			return runUpdatesMsg{feed: f, sub: sub, closed: true}
		}
		batch := []runs.Update{u}
		for len(batch) < maxBatch {
			select {
			case u, ok := <-sub.C():
				if !ok {
					return runUpdatesMsg{feed: f, sub: sub, updates: batch}
				}
				batch = append(batch, u)
				continue
			default:
			}
			break
		}
		return runUpdatesMsg{feed: f, sub: sub, updates: batch}
	}
}

// closeRunSub ends a run subscription the dashboard no longer reads, off
// the UI goroutine.
func closeRunSub(sub *runs.Subscription) tea.Cmd {
	if sub == nil {
		return nil
	}
	return func() tea.Msg {
		sub.Close()
		return nil
	}
}

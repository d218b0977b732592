package tui

import (
	"errors"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/sessions"
)

// Messages from the outside world, produced by the commands below.
type (
	listMsg struct {
		list []*sessions.Session
		err  error
	}
	updatedMsg struct {
		list    []*sessions.Session
		removed []string
	}
	changesMsg   []sessions.Change
	watchDoneMsg struct{}
	trajMsg      struct {
		traj    *sessions.Trajectory
		id      string
		session *sessions.Session
		batches []sessions.TurnEvents
		err     error
	}
	actionMsg struct {
		text string
		err  error
	}
)

func (m Model) loadAll() tea.Cmd {
	src, ctx := m.opt.Sessions, m.ctx
	return func() tea.Msg {
		list, err := src.List(ctx, sessions.ListOptions{})
		return listMsg{list: list, err: err}
	}
}

// refresh re-reads the records of some sessions.
func (m Model) refresh(ids []string) tea.Cmd {
	src, ctx := m.opt.Sessions, m.ctx
	return func() tea.Msg {
		var up updatedMsg
		for _, id := range ids {
			s, err := src.Get(ctx, id)
			switch {
			case errors.Is(err, sessions.ErrNotFound):
				up.removed = append(up.removed, id)
			case err == nil:
				up.list = append(up.list, s)
			}
		}
		return up
	}
}

// waitChanges waits for the next batch of file changes.
func (m Model) waitChanges() tea.Cmd {
	ch := m.opt.Changes
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		c, ok := <-ch
		if !ok {
			return watchDoneMsg{}
		}
		return changesMsg(c)
	}
}

// readTrajectory reads what the selected session's agent wrote since the
// last read. Only one read is in flight at a time.
func (m *Model) readTrajectory() tea.Cmd {
	if m.traj == nil || m.trajBusy {
		m.trajDirty = m.traj != nil
		return nil
	}
	m.trajBusy, m.trajDirty = true, false
	tr, id, ctx := m.traj, m.detail.ID(), m.ctx
	return func() tea.Msg {
		s, batches, err := tr.Read(ctx)
		return trajMsg{traj: tr, id: id, session: s, batches: batches, err: err}
	}
}

func (m Model) inject(id, text string) tea.Cmd {
	src, ctx := m.opt.Sessions, m.ctx
	return func() tea.Msg {
		e, err := src.Inject(ctx, id, text)
		if err != nil {
			return actionMsg{err: err}
		}
		return actionMsg{text: fmt.Sprintf("follow-up %d sent to %s", e.Seq+1, sessions.ShortID(id))}
	}
}

func (m Model) kill(id string) tea.Cmd {
	src, ctx := m.opt.Sessions, m.ctx
	return func() tea.Msg {
		s, err := src.Kill(ctx, id)
		if err != nil {
			return actionMsg{err: err}
		}
		return actionMsg{text: fmt.Sprintf("%s %s", sessions.ShortID(id), s.Status)}
	}
}

func (m Model) remove(id string) tea.Cmd {
	src, ctx := m.opt.Sessions, m.ctx
	return func() tea.Msg {
		if _, err := src.Remove(ctx, id, false); err != nil {
			return actionMsg{err: err}
		}
		return actionMsg{text: "deleted " + sessions.ShortID(id)}
	}
}

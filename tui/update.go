package tui

import (
	"errors"
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/tui/prompt"
)

// Update routes a message: outside events update the data, keys go to the
// prompt when it is open, else to the global bindings, else to the focused
// pane. Errors only ever reach the status line.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
	case listMsg:
		if msg.err != nil {
			m.setError(msg.err)
			break
		}
		m.loaded = true
		m.list.Replace(msg.list)
		m.header.SetSessions(m.list.All())
		cmds = append(cmds, m.followSelection())
		m.layout()
	case updatedMsg:
		m.list.Upsert(msg.list, msg.removed)
		m.header.SetSessions(m.list.All())
		for _, s := range msg.list {
			m.detail.SetSession(s)
		}
		cmds = append(cmds, m.followSelection())
		m.layout()
	case changesMsg:
		cmds = append(cmds, m.onChanges(msg), m.waitChanges())
	case watchDoneMsg:
		m.setError(errors.New("stopped watching the state dir; press r to reload"))
	case trajMsg:
		cmds = append(cmds, m.onTrajectory(msg))
	case actionMsg:
		if msg.err != nil {
			m.setError(msg.err)
		} else {
			m.setStatus(msg.text)
		}
	case spinner.TickMsg:
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		cmds = append(cmds, cmd, m.onTick())
	case prompt.SubmitMsg:
		cmds = append(cmds, m.onSubmit(msg))
	case prompt.CancelMsg:
		if msg.Mode == prompt.Confirm {
			m.setStatus("cancelled")
		}
		m.layout()
	case tea.KeyMsg:
		cmds = append(cmds, m.onKey(msg))
	case tea.MouseMsg:
		var cmd tea.Cmd
		m.detail, cmd = m.detail.Update(msg)
		cmds = append(cmds, cmd)
	default:
		if m.prompt.Active() {
			var cmd tea.Cmd
			m.prompt, cmd = m.prompt.Update(msg)
			cmds = append(cmds, cmd)
		}
	}
	return m, tea.Batch(cmds...)
}

func (m *Model) setStatus(s string) { m.status, m.statusErr = s, false }

func (m *Model) setError(err error) {
	m.status, m.statusErr = err.Error(), true
	m.opt.Log.Warn("dashboard", "err", err)
}

// onChanges reloads the records that changed and reads the selected
// session's new output.
func (m *Model) onChanges(changes []sessions.Change) tea.Cmd {
	var ids []string
	seen := map[string]bool{}
	selected := false
	for _, c := range changes {
		if (c.Meta || c.Removed) && !seen[c.ID] {
			seen[c.ID] = true
			ids = append(ids, c.ID)
		}
		if c.ID == m.detail.ID() {
			selected = true
		}
	}
	var cmds []tea.Cmd
	if len(ids) > 0 {
		cmds = append(cmds, m.refresh(ids))
	}
	if selected {
		cmds = append(cmds, m.readTrajectory())
	}
	return tea.Batch(cmds...)
}

func (m *Model) onTrajectory(msg trajMsg) tea.Cmd {
	m.trajBusy = false
	if msg.traj != m.traj {
		msg.traj.Close() // the selection moved on meanwhile
		return m.readTrajectory()
	}
	if msg.err != nil && !errors.Is(msg.err, sessions.ErrNotFound) {
		m.setError(msg.err)
	}
	if msg.session != nil {
		m.list.Upsert([]*sessions.Session{msg.session}, nil)
		m.header.SetSessions(m.list.All())
	}
	m.detail.Append(msg.session, msg.batches)
	if m.trajDirty {
		return m.readTrajectory()
	}
	return nil
}

// onTick refreshes runtimes and looks for sessions whose supervisor died
// without a file event (a SIGKILL writes nothing).
func (m *Model) onTick() tea.Cmd {
	m.list.SetNow(m.opt.Now())
	var stale []string
	for _, s := range m.list.All() {
		if !s.Status.Finished() && !s.Legacy && !s.Owner.Alive() {
			stale = append(stale, s.ID)
		}
	}
	if len(stale) > 0 {
		return m.refresh(stale)
	}
	return nil
}

// followSelection points the detail pane at the selected session.
func (m *Model) followSelection() tea.Cmd {
	sel := m.list.Selected()
	id := ""
	if sel != nil {
		id = sel.ID
	}
	if id == m.detail.ID() {
		return nil
	}
	if m.traj != nil && !m.trajBusy {
		m.traj.Close()
	}
	m.traj, m.trajDirty = nil, false
	m.detail.Reset(id)
	if sel == nil {
		return nil
	}
	m.detail.SetSession(sel)
	m.traj = m.opt.Sessions.NewTrajectory(id, sessions.TrajectoryOptions{Window: m.opt.Window})
	return m.readTrajectory()
}

func (m *Model) onKey(k tea.KeyMsg) tea.Cmd {
	if m.prompt.Active() {
		var cmd tea.Cmd
		m.prompt, cmd = m.prompt.Update(k)
		return cmd
	}
	if m.showHelp {
		if key.Matches(k, m.km.Quit) && k.String() == "ctrl+c" {
			return tea.Quit
		}
		m.showHelp = false
		m.layout()
		return nil
	}
	sel := m.list.Selected()
	switch {
	case key.Matches(k, m.km.Quit):
		return tea.Quit
	case key.Matches(k, m.km.Help):
		m.showHelp = true
		m.layout()
		return nil
	case key.Matches(k, m.km.Focus):
		if m.focus == focusList {
			m.focus = focusDetail
		} else {
			m.focus = focusList
		}
		m.list.SetFocused(m.focus == focusList)
		m.detail.SetFocused(m.focus == focusDetail)
		return nil
	case key.Matches(k, m.km.Inject):
		if sel == nil {
			m.setError(errors.New("no session selected"))
			return nil
		}
		cmd := m.prompt.OpenInject(sel.ID, sessions.ShortID(sel.ID))
		m.layout()
		return cmd
	case key.Matches(k, m.km.Kill):
		if sel == nil {
			return nil
		}
		if sel.Status.Finished() && sel.Owner == nil {
			m.setError(fmt.Errorf("%s is not running (%s)", sessions.ShortID(sel.ID), sel.Status))
			return nil
		}
		m.prompt.OpenConfirm("kill", sel.ID, fmt.Sprintf("kill %s and every process it started?", sessions.ShortID(sel.ID)))
		m.layout()
		return nil
	case key.Matches(k, m.km.Delete):
		if sel == nil {
			return nil
		}
		if !sel.Status.Finished() || sel.Owner != nil {
			m.setError(fmt.Errorf("%s is %s: only finished sessions can be deleted (kill it first with x)", sessions.ShortID(sel.ID), sel.Status))
			return nil
		}
		m.prompt.OpenConfirm("delete", sel.ID, fmt.Sprintf("delete %s and everything it recorded?", sessions.ShortID(sel.ID)))
		m.layout()
		return nil
	case key.Matches(k, m.km.Filter):
		cmd := m.prompt.OpenFilter(m.list.Filter())
		m.layout()
		return cmd
	case key.Matches(k, m.km.Sort):
		m.setStatus("sorted by " + m.list.CycleSort().String())
		return m.followSelection()
	case key.Matches(k, m.km.ToggleFinished):
		if m.list.ToggleFinished() {
			m.setStatus("showing finished sessions")
		} else {
			m.setStatus("hiding finished sessions")
		}
		m.layout()
		return m.followSelection()
	case key.Matches(k, m.km.Reload):
		m.setStatus("reloaded")
		return m.loadAll()
	}
	var cmd tea.Cmd
	if m.focus == focusList {
		m.list, cmd = m.list.Update(k)
		return tea.Batch(cmd, m.followSelection())
	}
	m.detail, cmd = m.detail.Update(k)
	return cmd
}

func (m *Model) onSubmit(msg prompt.SubmitMsg) tea.Cmd {
	defer m.layout()
	switch msg.Mode {
	case prompt.Inject:
		if msg.Value == "" {
			m.setError(errors.New("empty follow-up not sent"))
			return nil
		}
		m.setStatus("sending follow-up to " + sessions.ShortID(msg.Target) + "…")
		return m.inject(msg.Target, msg.Value)
	case prompt.Filter:
		m.list.SetFilter(msg.Value)
		if msg.Value == "" {
			m.setStatus("filter cleared")
		} else {
			m.setStatus("filter: " + msg.Value)
		}
		return m.followSelection()
	case prompt.Confirm:
		switch msg.Action {
		case "kill":
			m.setStatus("killing " + sessions.ShortID(msg.Target) + "…")
			return m.kill(msg.Target)
		case "delete":
			return m.remove(msg.Target)
		}
	}
	return nil
}

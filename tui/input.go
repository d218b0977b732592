package tui

import (
	"errors"
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/tui/prompt"
)

// interrupt quits on Ctrl+C: the command exits 130 (ErrInterrupted).
func (m *Model) interrupt() tea.Cmd {
	m.interrupted = true
	return tea.Quit
}

// onKey handles a key: the prompt's when it is open, else the help's, the
// global bindings', or the focused pane's.
func (m *Model) onKey(k tea.KeyMsg) tea.Cmd {
	if m.prompt.Active() {
		return update(&m.prompt, k)
	}
	if m.showHelp {
		if key.Matches(k, m.KeyMap.Quit) && k.String() == "ctrl+c" {
			return m.interrupt()
		}
		m.showHelp = false
		m.layout()
		return nil
	}
	if m.diff.Active() {
		return m.onDiffKey(k)
	}
	sel := m.list.Selected()
	if row, ok := m.list.SelectedRow(); ok && row.Run != nil {
		if key.Matches(k, m.KeyMap.Inject) {
			cmd := m.openRunMessage(row.Run)
			m.layout()
			return cmd
		}
		if err := runRefusal(k, m.KeyMap, row.Run); err != nil {
			m.setError(err)
			return nil
		}
	}
	switch {
	case k.String() == "ctrl+c":
		return m.interrupt()
	case key.Matches(k, m.KeyMap.Quit):
		return tea.Quit
	case key.Matches(k, m.KeyMap.Help):
		m.showHelp = true
		m.layout()
		return nil
	case key.Matches(k, m.KeyMap.Focus):
		if m.focus == focusList {
			m.focus = focusDetail
		} else {
			m.focus = focusList
		}
		m.list.SetFocused(m.focus == focusList)
		m.detail.SetFocused(m.focus == focusDetail)
		return nil
	case key.Matches(k, m.KeyMap.Inject), key.Matches(k, m.KeyMap.Steer):
		if sel == nil {
			m.setError(errors.New("no session selected"))
			return nil
		}
		cmd := m.prompt.OpenInject(sel.ID, record.ShortID(sel.ID), key.Matches(k, m.KeyMap.Steer))
		m.layout()
		return cmd
	case key.Matches(k, m.KeyMap.Attach):
		if sel == nil {
			m.setError(errors.New("no session selected"))
			return nil
		}
		return m.openAttach(sel)
	case key.Matches(k, m.KeyMap.Kill):
		if sel == nil {
			return nil
		}
		if sel.Settled() {
			m.setError(fmt.Errorf("%s is not running (%s)", record.ShortID(sel.ID), sel.Status()))
			return nil
		}
		m.prompt.OpenConfirm("kill", sel.ID, fmt.Sprintf("kill %s and every process it started?", record.ShortID(sel.ID)))
		m.layout()
		return nil
	case key.Matches(k, m.KeyMap.Delete):
		if sel == nil {
			return nil
		}
		if !sel.Settled() {
			m.setError(fmt.Errorf("%s is %s: only finished sessions can be deleted (kill it first with x)", record.ShortID(sel.ID), sel.Status()))
			return nil
		}
		m.prompt.OpenConfirm("delete", sel.ID, fmt.Sprintf("delete %s and everything it recorded?", record.ShortID(sel.ID)))
		m.layout()
		return nil
	case key.Matches(k, m.KeyMap.Diff):
		if sel == nil {
			m.setError(errors.New("no session selected"))
			return nil
		}
		return m.openDiff(sel)
	case key.Matches(k, m.KeyMap.Land):
		if sel == nil {
			m.setError(errors.New("no session selected"))
			return nil
		}
		return m.planLand(sel.ID)
	case key.Matches(k, m.KeyMap.Filter):
		cmd := m.prompt.OpenFilter(m.list.Filter())
		m.layout()
		return cmd
	case key.Matches(k, m.KeyMap.Sort):
		m.setStatus("sorted by " + m.list.CycleSort().String())
		return m.followSelection()
	case key.Matches(k, m.KeyMap.ToggleFinished):
		if m.list.ToggleFinished() {
			m.setStatus("showing finished sessions")
		} else {
			m.setStatus("hiding finished sessions")
		}
		m.layout()
		return m.followSelection()
	case key.Matches(k, m.KeyMap.Reload):
		m.setStatus("reloaded")
		old, oldTraj, oldRuns, oldRunTraj := m.listSub, m.trajSub, m.runListSub, m.runTrajSub
		m.listSub, m.trajSub, m.runListSub, m.runTrajSub = nil, nil, nil, nil
		m.list.Replace(nil)
		m.list.UpsertRuns(nil, runIDs(m.list.Runs()))
		m.detail.Reset("")
		m.sessionsSynced, m.pending = false, 0
		m.setLoading()
		return tea.Batch(closeSub(old), closeSub(oldTraj), closeRunSub(oldRuns), closeRunSub(oldRunTraj),
			m.subscribe(listFeed, "", listOptions), m.subscribeRuns(listFeed, runs.SubscribeOptions{}))
	}
	if m.focus == focusList {
		return tea.Batch(update(&m.list, k), m.followSelection())
	}
	return update(&m.detail, k)
}

// onDiffKey handles a key while the diff view is open: it scrolls the
// diff, closes it (q too: quitting stays one Ctrl+C away), shows the help,
// or lands the session shown.
func (m *Model) onDiffKey(k tea.KeyMsg) tea.Cmd {
	switch {
	case k.String() == "ctrl+c":
		return m.interrupt()
	case key.Matches(k, m.KeyMap.Close):
		m.diff.Close()
		m.layout()
		return nil
	case key.Matches(k, m.KeyMap.Help):
		m.showHelp = true
		return nil
	case key.Matches(k, m.KeyMap.Land):
		return m.planLand(m.diff.ID())
	}
	return update(&m.diff, k)
}

func (m *Model) onSubmit(msg prompt.SubmitMsg) tea.Cmd {
	defer m.layout()
	switch msg.Mode {
	case prompt.Inject:
		if msg.Action != "" && msg.Action != prompt.SteerAction {
			return m.sendRun(msg)
		}
		if msg.Value == "" {
			m.setError(errors.New("empty follow-up not sent"))
			return nil
		}
		m.setStatus("sending follow-up to " + record.ShortID(msg.Target) + "…")
		return m.inject(msg.Target, msg.Value, msg.Action == prompt.SteerAction)
	case prompt.Filter:
		match := m.list.SetFilter(msg.Value)
		switch {
		case msg.Value == "":
			m.setStatus("filter cleared")
		case m.list.Matching():
			m.setStatus(fmt.Sprintf("filter: %s (looking through %d sessions…)", msg.Value, m.list.Listing().Len()))
		default:
			m.setStatus("filter: " + msg.Value)
		}
		return tea.Batch(match, m.followSelection())
	case prompt.Confirm:
		switch msg.Action {
		case "kill":
			m.setStatus("killing " + record.ShortID(msg.Target) + "…")
			if m.killedHere == nil {
				m.killedHere = map[string]bool{}
			}
			m.killedHere[msg.Target] = true
			return m.kill(msg.Target)
		case "delete":
			return m.remove(msg.Target)
		case "land":
			return m.land(msg.Target)
		case "attach":
			return m.attach(msg.Target, true)
		}
	}
	return nil
}

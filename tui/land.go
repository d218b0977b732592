package tui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// Landing a worker's change (L) asks first, with what would land: a dry
// run finds the branch and the diffstat, the confirmation line shows them,
// and a yes lands into that branch. Both run off the UI goroutine; Land's
// refusals (still running, a conflict, uncommitted changes in the way)
// are written for people and go to the status line as they are.

// landPlan is the landing the confirmation line asks about.
type landPlan struct{ id, into string }

// landPlanMsg is the dry run's answer.
type landPlanMsg struct {
	id  string
	res *sessions.LandResult
	err error
}

// planLand asks what landing session id would do. Like `zwarm land`, it
// lands into the branch checked out where the dashboard was started.
func (m *Model) planLand(id string) tea.Cmd {
	m.setStatus("checking what " + record.ShortID(id) + " would land…")
	src, ctx, dir := m.opt.Sessions, m.ctx, m.opt.Dir
	return func() tea.Msg {
		res, err := src.Land(ctx, id, sessions.LandOptions{DryRun: true, Dir: dir})
		return landPlanMsg{id: id, res: res, err: err}
	}
}

func (m *Model) onLandPlan(msg landPlanMsg) {
	if msg.err != nil {
		m.setError(msg.err)
		return
	}
	id, res := record.ShortID(msg.id), msg.res
	switch {
	case res.Already:
		m.setStatus(fmt.Sprintf("%s is landed already: in %s as %s", id, res.Into, workspace.Short(res.Commit)))
	case res.Nothing && res.Stat.Empty():
		m.setStatus(fmt.Sprintf("%s has nothing to land: the worker changed no file", id))
	case res.Nothing:
		m.setStatus(fmt.Sprintf("%s has nothing to land: %s has all of it already", id, res.Into))
	case m.prompt.Active():
		// The user went on to type something else meanwhile.
		m.setStatus(fmt.Sprintf("%s would land %s into %s: press L again to land it", id, res.Stat, res.Into))
	default:
		m.landing = landPlan{id: msg.id, into: res.Into}
		m.prompt.OpenConfirm("land", msg.id, fmt.Sprintf("land %s into %s: %s?", id, res.Into, res.Stat))
		m.layout()
	}
}

// land lands session id into the branch the confirmation named.
func (m *Model) land(id string) tea.Cmd {
	into := ""
	if m.landing.id == id {
		into = m.landing.into
	}
	m.landing = landPlan{}
	if into == "" {
		m.setStatus("landing " + record.ShortID(id) + "…")
	} else {
		m.setStatus("landing " + record.ShortID(id) + " into " + into + "…")
	}
	src, ctx, dir := m.opt.Sessions, m.ctx, m.opt.Dir
	return func() tea.Msg {
		res, err := src.Land(ctx, id, sessions.LandOptions{Into: into, Dir: dir})
		if err != nil {
			return actionMsg{err: err}
		}
		return actionMsg{text: landedText(res)}
	}
}

// landedText says what a landing did.
func landedText(r *sessions.LandResult) string {
	id := record.ShortID(r.Session.ID)
	switch {
	case r.Already:
		return fmt.Sprintf("%s was landed already: in %s as %s", id, r.Into, workspace.Short(r.Commit))
	case r.Nothing:
		return fmt.Sprintf("%s had nothing to land into %s", id, r.Into)
	}
	return fmt.Sprintf("landed %s into %s as %s: %s", id, r.Into, workspace.Short(r.Commit), r.Stat)
}

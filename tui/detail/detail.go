// Package detail is the dashboard's trajectory pane: the selected session's
// steps as they happen, turn by turn. It keeps a bounded window of the
// latest steps, never the whole transcript, and sticks to the bottom while
// new steps arrive unless the user has scrolled up.
package detail

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
	"github.com/zwarm/zwarm/tui/common"
	"github.com/zwarm/zwarm/tui/styles"
)

// MaxSteps bounds the steps on screen; twice as many at most are kept in
// memory.
const MaxSteps = 1000

type step struct {
	key   string // turn and item id, for items reported more than once
	turn  int
	ev    *record.Event // nil for a turn's header, prompt and end
	lines []render.Line
}

// Model is the detail pane.
type Model struct {
	common.Common
	vp      viewport.Model
	id      string
	session *record.Session
	steps   []step
	byKey   map[string]int
	loaded  bool // an update of the session has been applied
	dropped int
	follow  bool
	focused bool
	run     *runView // nil: the pane shows a session
}

var _ common.Component = (*Model)(nil)

// New returns an empty pane.
func New(c common.Common) Model {
	vp := viewport.New(0, 0)
	vp.KeyMap = viewport.KeyMap{} // keys are handled below, with follow mode
	return Model{Common: c, vp: vp, byKey: map[string]int{}, follow: true}
}

// Init does nothing: the pane is told what to show.
func (m *Model) Init() tea.Cmd { return nil }

// ID is the row shown: the session's id, or "run:ID" for a run.
func (m Model) ID() string { return m.id }

// Loaded reports whether the pane has shown an update of its session.
func (m Model) Loaded() bool { return m.loaded }

// Following reports whether the pane sticks to the newest step.
func (m Model) Following() bool { return m.follow }

// SetSize sets the pane's size; the first line is its title.
func (m *Model) SetSize(w, h int) {
	m.Common.SetSize(w, h)
	m.vp.Width, m.vp.Height = w, max(1, h-1)
	m.render()
}

// SetFocused says whether keys go to this pane.
func (m *Model) SetFocused(f bool) { m.focused = f }

// Reset shows another session, from nothing.
func (m *Model) Reset(id string) {
	m.id, m.session, m.steps, m.dropped, m.run = id, nil, nil, 0, nil
	m.byKey, m.follow, m.loaded = map[string]int{}, true, false
	m.render()
}

// SetSession updates the session's record (the title).
func (m *Model) SetSession(s *record.Session) {
	if s == nil || s.ID != m.id {
		return
	}
	m.session = s
	m.render()
}

// Apply adds what an update of the shown session reports, in the order it
// happened: each turn's header, its steps, and its end line under it. When
// a turn ends, its steps are drawn again as of its end: a command it never
// finished reads "killed", not "running".
func (m *Model) Apply(u watch.Update) {
	if u.ID != m.id {
		return
	}
	if u.Session != nil {
		m.session = u.Session
	}
	m.loaded = true
	timeline := u.Timeline()
	// Of a burst of events (a window of a turn that grew by gigabytes),
	// only the last MaxSteps can be on screen: the others are counted, not
	// drawn, so that the pane answers keys as soon after a burst as after
	// a few events.
	skip := -MaxSteps
	for i := range timeline {
		if timeline[i].Kind == watch.StepEvent {
			skip++
		}
	}
	for _, st := range timeline {
		n := st.Turn.N
		if st.Kind == watch.StepEvent && skip > 0 {
			skip--
			m.dropped++
			continue
		}
		switch st.Kind {
		case watch.StepTurnStarted:
			m.add(step{turn: n, lines: append([]render.Line{render.TurnHeader(st.Turn)}, render.Prompt(st.Turn)...)})
			if st.Skipped > 0 {
				m.add(step{turn: n, lines: []render.Line{{Kind: render.Raw, Indent: 1,
					Text: fmt.Sprintf("… %s of earlier output not shown (zwarm logs %s --turn %d has it all)", size(st.Skipped), record.ShortID(m.id), n)}}})
			}
		case watch.StepSkipped:
			m.add(step{turn: n, lines: []render.Line{{Kind: render.Raw, Indent: 1,
				Text: fmt.Sprintf("… %s of output not shown while the dashboard caught up (zwarm logs %s --turn %d has it all)", size(st.Skipped), record.ShortID(m.id), n)}}})
		case watch.StepTurnEnded:
			t := st.Turn
			for i := range m.steps {
				if s := &m.steps[i]; s.turn == n && s.ev != nil {
					s.lines = render.Step(*s.ev, &t)
				}
			}
			m.add(step{turn: n, lines: render.TurnEnd(t, "")})
		case watch.StepEvent:
			ev := st.Event
			lines := render.Of(ev)
			if len(lines) == 0 {
				continue
			}
			k := ""
			if ev.ItemID != "" && ev.Phase != "" {
				k = fmt.Sprintf("%d/%s/%s", n, ev.ItemID, ev.Type)
			}
			if i, ok := m.byKey[k]; ok && k != "" {
				m.steps[i].lines, m.steps[i].ev = lines, &ev
				continue
			}
			m.add(step{key: k, turn: n, ev: &ev, lines: lines})
		}
	}
	m.render()
}

func (m *Model) add(s step) {
	if s.key != "" {
		m.byKey[s.key] = len(m.steps)
	}
	m.steps = append(m.steps, s)
	// The oldest steps go a thousand at a time, not one per step added: a
	// burst of events costs each one an append, not a copy of the pane.
	if over := len(m.steps) - MaxSteps; over >= MaxSteps {
		m.steps = append([]step(nil), m.steps[over:]...)
		m.dropped += over
		m.byKey = map[string]int{}
		for i, s := range m.steps {
			if s.key != "" {
				m.byKey[s.key] = i
			}
		}
	}
}

func (m *Model) render() {
	var b strings.Builder
	first := max(0, len(m.steps)-MaxSteps) // the pane shows the last MaxSteps
	if hidden := m.dropped + first; hidden > 0 {
		b.WriteString(m.Styles.Dim.Render(fmt.Sprintf("… %d earlier steps not shown", hidden)) + "\n")
	}
	for _, s := range m.steps[first:] {
		for _, l := range s.lines {
			style := m.style(l)
			for _, piece := range wrap(l, m.Width) {
				b.WriteString(style.Render(piece) + "\n")
			}
		}
	}
	for _, l := range m.runTail() {
		for _, piece := range wrap(l, m.Width) {
			b.WriteString(m.style(l).Render(piece) + "\n")
		}
	}
	// A session that failed before its first turn has only its error.
	if s := m.session; s != nil && len(s.Turns) == 0 && s.Error != "" {
		for _, piece := range wrap(render.Line{Kind: render.Error, Text: "✗ " + render.Clip(s.Error, 2000)}, m.Width) {
			b.WriteString(m.Styles.Error.Render(piece) + "\n")
		}
	}
	m.vp.SetContent(strings.TrimRight(b.String(), "\n"))
	if m.follow {
		m.vp.GotoBottom()
	}
}

func (m Model) style(l render.Line) lipgloss.Style {
	switch l.Kind {
	case render.Turn:
		return m.Styles.Turn
	case render.User:
		return m.Styles.User
	case render.Reasoning, render.Raw:
		return m.Styles.Reasoning
	case render.Command:
		return m.Styles.Command
	case render.Output:
		return m.Styles.Output
	case render.File:
		return m.Styles.File
	case render.Todo:
		return m.Styles.Todo
	case render.Tool:
		return m.Styles.Tool
	case render.Error:
		return m.Styles.Error
	case render.Done:
		return m.Styles.Dim
	}
	return m.Styles.Message
}

// Update scrolls when the pane has focus. Scrolling up leaves follow mode;
// reaching the bottom (or End) returns to it.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		if !m.focused {
			return m, nil
		}
		if !m.KeyMap.Scroll(msg, &m.vp) {
			return m, nil
		}
		m.follow = m.vp.AtBottom()
	case tea.MouseMsg:
		var cmd tea.Cmd
		m.vp, cmd = m.vp.Update(msg)
		m.follow = m.vp.AtBottom()
		return m, cmd
	}
	return m, nil
}

// ShortHelp is the keys that scroll.
func (m *Model) ShortHelp() []key.Binding { return []key.Binding{m.KeyMap.Up, m.KeyMap.Down} }

// FullHelp is every key that scrolls.
func (m *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{m.KeyMap.Moves()}
}

// View renders the title line and the render.
func (m Model) View() string {
	title := "no session selected"
	if m.run != nil {
		title = m.runTitle()
	} else if s := m.session; s != nil {
		title = fmt.Sprintf("%s %s %s · %s · %s", record.ShortID(s.ID), styles.Icon(s.Status()), s.Status(), s.Adapter, render.SafeLine(s.Task))
		if ws := s.Workspace; ws != nil && ws.Preparing() && !s.WorktreeAwaitsJob() {
			title = fmt.Sprintf("%s %s %s · preparing worktree · %s", record.ShortID(s.ID), styles.Icon(s.Status()), s.Status(), render.SafeLine(s.Task))
		}
	} else if m.id != "" {
		title = record.ShortID(m.id)
	}
	mode := "follow"
	if !m.follow {
		mode = fmt.Sprintf("%d%%", int(m.vp.ScrollPercent()*100))
	}
	// The focused pane is marked by ▶, which reads without colour too.
	style, lead := m.Styles.Dim, "── "
	if m.focused {
		style, lead = m.Styles.Bold, "▶ "
	}
	right := " [" + mode + "]"
	avail := max(0, m.Width-lipgloss.Width(right)-3)
	line := style.Render(lead + clipText(title, avail) + right)
	return line + "\n" + m.vp.View()
}

// wrap is line l as the pieces that show it in width cells.
func wrap(l render.Line, width int) []string {
	return render.Wrap(l.Text, strings.Repeat("  ", l.Indent), width)
}

func clipText(s string, n int) string {
	s = render.SafeLine(strings.Join(strings.Fields(s), " "))
	if lipgloss.Width(s) <= n {
		return s
	}
	return render.Clip(s, max(1, n))
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Package diffview is the dashboard's view of what a worker changed: its
// diff against its base, as git prints it, scrollable, in place of the
// list and the trajectory until it is closed. It keeps a bounded prefix of
// a huge diff (see Load) and says where it was cut.
package diffview

import (
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/mattn/go-runewidth"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/tui/common"
)

// sideways is how many columns ←/→ scroll.
const sideways = 8

// Model is the diff view.
type Model struct {
	common.Common
	vp      viewport.Model
	open    bool
	seq     int
	id      string
	session *record.Session
	loaded  bool
	lines   []string
	cut     string
	err     error
}

var _ common.Component = (*Model)(nil)

// New returns a closed view.
func New(c common.Common) Model {
	vp := viewport.New(0, 0)
	vp.KeyMap = viewport.KeyMap{} // keys are handled below, with the dashboard's map
	return Model{Common: c, vp: vp}
}

// Init does nothing: the view is opened and given its diff.
func (m *Model) Init() tea.Cmd { return nil }

// Open shows session s's diff, loading; the caller loads it with Load and
// the number Open returns, so a load that an earlier opening asked for is
// never shown.
func (m *Model) Open(s *record.Session) int {
	m.seq++
	m.open, m.id, m.session = true, s.ID, s
	m.loaded, m.lines, m.cut, m.err = false, nil, "", nil
	m.vp.SetXOffset(0)
	m.vp.GotoTop()
	m.render()
	return m.seq
}

// Close closes the view and lets go of the diff.
func (m *Model) Close() {
	m.open, m.lines = false, nil
	m.vp.SetContent("")
}

// Active reports whether the view is open.
func (m Model) Active() bool { return m.open }

// ID is the session shown, "" when closed.
func (m Model) ID() string {
	if !m.open {
		return ""
	}
	return m.id
}

// Loaded reports whether the diff (or why there is none) is shown.
func (m Model) Loaded() bool { return m.loaded }

// SetSize sets the view's size; the first line is its title.
func (m *Model) SetSize(w, h int) {
	m.Common.SetSize(w, h)
	m.vp.Width, m.vp.Height = w, max(1, h-1)
	m.render()
}

// SetSession updates the shown session's record (the title's summary of
// its change).
func (m *Model) SetSession(s *record.Session) {
	if m.open && s != nil && s.ID == m.id {
		m.session = s
	}
}

// Apply shows a loaded diff, if it is the one the view waits for.
func (m *Model) Apply(msg LoadedMsg) {
	if !m.open || msg.seq != m.seq || msg.ID != m.id {
		return
	}
	if msg.Session != nil {
		m.session = msg.Session
	}
	m.loaded, m.lines, m.cut, m.err = true, msg.Lines, msg.Cut, msg.Err
	m.render()
}

func (m *Model) render() {
	if !m.open {
		return
	}
	id := record.ShortID(m.id)
	var body string
	switch {
	case !m.loaded:
		body = m.Styles.Dim.Render(m.note("loading the diff of " + id + "…"))
	case errors.Is(m.err, sessions.ErrInPlace):
		body = m.note(m.err.Error())
	case m.err != nil:
		body = m.Styles.Error.Render(m.note("✗ " + m.err.Error()))
	case len(m.lines) == 0:
		body = m.Styles.Dim.Render(m.note("no changes: the worker has changed no file (yet)"))
	default:
		body = strings.Join(m.lines, "\n")
		if m.cut != "" {
			body += "\n\n" + m.Styles.Dim.Render(m.note(fmt.Sprintf("✂ cut here: the view keeps %s of the diff; zwarm diff %s shows all of it", m.cut, id)))
		}
	}
	m.vp.SetContent(body)
}

// note is a message in place of the diff, wrapped to the view's width.
func (m Model) note(s string) string {
	s = render.Safe(s)
	if m.Width <= 0 {
		return s
	}
	return lipgloss.NewStyle().Width(m.Width).Render(s)
}

// Update scrolls.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if !m.open {
		return m, nil
	}
	switch msg := msg.(type) {
	case tea.KeyMsg:
		switch {
		case m.KeyMap.Scroll(msg, &m.vp):
		case key.Matches(msg, m.KeyMap.Left):
			m.vp.ScrollLeft(sideways)
		case key.Matches(msg, m.KeyMap.Right):
			m.vp.ScrollRight(sideways)
		}
	case tea.MouseMsg:
		var cmd tea.Cmd
		m.vp, cmd = m.vp.Update(msg)
		return m, cmd
	}
	return m, nil
}

// ShortHelp is the help line while the view is open.
func (m *Model) ShortHelp() []key.Binding { return m.KeyMap.DiffHelp() }

// FullHelp is every key of the view: the root model handles landing and
// closing while it is open.
func (m *Model) FullHelp() [][]key.Binding {
	return [][]key.Binding{append(m.KeyMap.Moves(), m.KeyMap.Left), {m.KeyMap.Land, m.KeyMap.Close}}
}

// View renders the title line and the diff.
func (m Model) View() string {
	if !m.open {
		return ""
	}
	s := m.session
	parts := []string{"diff " + record.ShortID(m.id), render.SafeLine(s.ChangesText())}
	if m.cut != "" {
		parts = append(parts, m.cut+" shown")
	}
	parts = append(parts, render.SafeLine(strings.Join(strings.Fields(s.Task), " ")))
	where := "all"
	if m.vp.TotalLineCount() > m.vp.Height {
		where = fmt.Sprintf("%d%%", int(m.vp.ScrollPercent()*100))
	}
	right := " [" + where + "]"
	title := strings.Join(parts, " · ")
	avail := max(1, m.Width-lipgloss.Width(right)-2)
	title = runewidth.Truncate(title, avail, "…")
	// The view has the keys: it is marked as the focused pane is.
	return m.Styles.Bold.Render("▶ "+title+right) + "\n" + m.vp.View()
}

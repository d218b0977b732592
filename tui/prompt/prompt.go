// Package prompt is the dashboard's input line: typing a follow-up or a
// filter, and yes/no confirmations for kill and delete. It reports what the
// user decided as a message; the root model acts on it.
package prompt

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/zwarm/zwarm/tui/common"
)

// Mode is what the prompt is asking for.
type Mode int

const (
	Closed Mode = iota
	Inject
	Filter
	Confirm
)

// SubmitMsg is the user's answer: the text typed (Inject, Filter) or a
// yes (Confirm), about Target.
type SubmitMsg struct {
	Mode   Mode
	Action string
	Target string
	Value  string
}

// CancelMsg says the user backed out.
type CancelMsg struct{ Mode Mode }

// Model is the prompt pane.
type Model struct {
	common.Common
	mode     Mode
	input    input
	question string
	action   string
	target   string
}

var _ common.Component = (*Model)(nil)

// New returns a closed prompt.
func New(c common.Common) Model {
	return Model{Common: c}
}

// Init does nothing: the prompt is opened.
func (m *Model) Init() tea.Cmd { return nil }

// Active reports whether the prompt takes the keys.
func (m Model) Active() bool { return m.mode != Closed }

// Mode is what the prompt asks for now.
func (m Model) Mode() Mode { return m.mode }

const hint = "  (enter to send, esc to cancel)"

// SteerAction is the Action of a follow-up that first stops the running
// turn (inject --interrupt).
const SteerAction = "steer"

// OpenInject asks for a follow-up to target; steer, one that stops its
// running turn first, reported as an Inject with SteerAction.
func (m *Model) OpenInject(target, label string, steer bool) tea.Cmd {
	if steer {
		return m.OpenMessage(SteerAction, target, "stop the turn of "+label+" and send: ")
	}
	return m.OpenMessage("", target, "follow-up to "+label+": ")
}

// OpenMessage asks for text about target with its own question: a
// message to a run ("say"), or an answer to its question ("answer"),
// reported as an Inject with that Action.
func (m *Model) OpenMessage(action, target, question string) tea.Cmd {
	m.mode, m.action, m.target, m.question = Inject, action, target, question
	m.input.SetValue("")
	return nil
}

// OpenFilter asks for a filter, starting from the current one.
func (m *Model) OpenFilter(current string) tea.Cmd {
	m.mode, m.action, m.question = Filter, "", "filter: "
	m.input.SetValue(current)
	return nil
}

// OpenConfirm asks a yes/no question about an action on target.
func (m *Model) OpenConfirm(action, target, question string) {
	m.mode, m.action, m.target, m.question = Confirm, action, target, question+" [y/N] "
}

func (m *Model) close() { m.mode = Closed }

// Update handles keys while the prompt is open.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if m.mode == Closed {
		return m, nil
	}
	k, isKey := msg.(tea.KeyMsg)
	if m.mode == Confirm {
		if !isKey {
			return m, nil
		}
		mode, action, target := m.mode, m.action, m.target
		m.close()
		if k.String() == "y" || k.String() == "Y" {
			return m, answer(SubmitMsg{Mode: mode, Action: action, Target: target})
		}
		return m, answer(CancelMsg{Mode: mode})
	}
	if isKey {
		switch k.Type {
		case tea.KeyEnter:
			mode, action, target, value := m.mode, m.action, m.target, m.input.Value()
			m.close()
			return m, answer(SubmitMsg{Mode: mode, Action: action, Target: target, Value: value})
		case tea.KeyEsc, tea.KeyCtrlC:
			mode := m.mode
			m.close()
			return m, answer(CancelMsg{Mode: mode})
		}
	}
	if isKey {
		m.input.Update(k)
	}
	return m, nil
}

func answer(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// The prompt's keys, as its line states them: a text is sent or cancelled;
// a question is answered y, any other key is a no.
var (
	send   = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send"))
	cancel = key.NewBinding(key.WithKeys("esc", "ctrl+c"), key.WithHelp("esc", "cancel"))
	yes    = key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes, any other key no"))
)

// ShortHelp is the keys of what the prompt asks now; none while closed.
func (m *Model) ShortHelp() []key.Binding {
	switch m.mode {
	case Closed:
		return nil
	case Confirm:
		return []key.Binding{yes}
	}
	return []key.Binding{send, cancel}
}

// FullHelp is ShortHelp.
func (m *Model) FullHelp() [][]key.Binding {
	if h := m.ShortHelp(); h != nil {
		return [][]key.Binding{h}
	}
	return nil
}

// View renders the prompt line, or nothing when closed.
func (m Model) View() string {
	switch m.mode {
	case Closed:
		return ""
	case Confirm:
		return m.Styles.Prompt.Render(m.question)
	}
	width := max(10, m.Width-lipgloss.Width(m.question)-lipgloss.Width(hint)-1)
	return m.Styles.Prompt.Render(m.question) + m.input.View(width, m.Styles.Selected) + m.Styles.Dim.Render(hint)
}

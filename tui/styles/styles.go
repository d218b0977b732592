// Package styles holds the dashboard's colours and status icons. Colours
// degrade by the terminal's profile: with NO_COLOR or the ASCII profile
// only the icons and text remain.
package styles

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/zwarm/zwarm/sessions/record"
)

// Styles is every style the panes use.
type Styles struct {
	Title, Header, Dim, Bold lipgloss.Style
	Selected, Attention      lipgloss.Style
	Border, FocusedBorder    lipgloss.Style
	Status, StatusError      lipgloss.Style
	Prompt                   lipgloss.Style

	// Steps of a trajectory.
	Turn, User, Reasoning, Command, Output, File, Todo, Tool, Message, Error lipgloss.Style

	statusColors map[record.Status]lipgloss.Style
	runColors    map[string]lipgloss.Style
}

// New returns the default styles.
func New() Styles {
	c := func(s string) lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Color(s)) }
	return Styles{
		Title:         lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("13")),
		Header:        lipgloss.NewStyle().Bold(true),
		Dim:           c("8"),
		Bold:          lipgloss.NewStyle().Bold(true),
		Selected:      lipgloss.NewStyle().Reverse(true),
		Attention:     lipgloss.NewStyle().Bold(true),
		Border:        lipgloss.NewStyle().Border(lipgloss.NormalBorder()).BorderForeground(lipgloss.Color("8")),
		FocusedBorder: lipgloss.NewStyle().Border(lipgloss.NormalBorder()).BorderForeground(lipgloss.Color("12")),
		Status:        c("8"),
		StatusError:   c("9").Bold(true),
		Prompt:        c("12").Bold(true),
		Turn:          c("13").Bold(true),
		User:          c("14"),
		Reasoning:     c("8").Italic(true),
		Command:       c("11"),
		Output:        c("8"),
		File:          c("10"),
		Todo:          c("12"),
		Tool:          c("12"),
		Message:       lipgloss.NewStyle(),
		Error:         c("9"),
		statusColors: map[record.Status]lipgloss.Style{
			record.StatusPending:   c("8"),
			record.StatusRunning:   c("12"),
			record.StatusAttached:  c("13"),
			record.StatusCompleted: c("10"),
			record.StatusFailed:    c("9"),
			record.StatusKilled:    c("11"),
		},
		runColors: map[string]lipgloss.Style{
			"running":     c("12"),
			"waiting":     c("13"),
			"completed":   c("10"),
			"failed":      c("9"),
			"limited":     c("11"),
			"interrupted": c("11"),
		},
	}
}

// Icon is a status's symbol; it tells statuses apart without colour.
func Icon(st record.Status) string {
	switch st {
	case record.StatusPending:
		return "…"
	case record.StatusRunning:
		return "●"
	case record.StatusAttached:
		return "◆" // a person works in it
	case record.StatusCompleted:
		return "✓"
	case record.StatusFailed:
		return "✗"
	case record.StatusKilled:
		return "■"
	}
	return "?"
}

// StatusStyle is the colour of a status.
func (s Styles) StatusStyle(st record.Status) lipgloss.Style { return s.statusColors[st] }

// RunIcon is the symbol of a run's status (a runs.Status, by its name,
// so the palette needs nothing of the orchestrator): the statuses a run
// shares with a session have the same one.
func RunIcon(st string) string {
	switch st {
	case "running":
		return "●"
	case "waiting":
		return "?" // it asks you
	case "completed":
		return "✓"
	case "failed":
		return "✗"
	case "limited":
		return "⊘"
	case "interrupted":
		return "‖"
	}
	return "?"
}

// RunStatusStyle is the colour of a run's status (a runs.Status).
func (s Styles) RunStatusStyle(st string) lipgloss.Style { return s.runColors[st] }

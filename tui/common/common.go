// Package common is what the dashboard's panes share: the contract each
// pane satisfies (Component), and the styles, keys and size each embeds
// (Common). The root model sizes the panes, hands them messages and asks
// them for their keys through it.
package common

import (
	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/tui/keys"
	"github.com/zwarm/zwarm/tui/styles"
)

// Component is a pane: a Bubble Tea model that is told its size and says
// which keys it takes (for the help). Its methods have pointer receivers
// and change it in place: Update returns the pane itself.
type Component interface {
	tea.Model
	help.KeyMap
	SetSize(width, height int)
}

// Common is embedded by every pane: the dashboard's styles and keys, one
// of each for all the panes, and the pane's own size.
type Common struct {
	Styles        *styles.Styles
	KeyMap        *keys.KeyMap
	Width, Height int
}

// New returns the dashboard's styles and keys, with no size yet.
func New() Common {
	st, km := styles.New(), keys.Default()
	return Common{Styles: &st, KeyMap: &km}
}

// SetSize sets the size.
func (c *Common) SetSize(width, height int) { c.Width, c.Height = width, height }

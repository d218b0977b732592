// Package keys is the dashboard's key map, shared by the panes and the
// help overlay.
package keys

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
)

// KeyMap is every binding of the dashboard.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	// Left and Right scroll the diff view sideways: a diff's long lines
	// are cut at the edge, not wrapped, so its +/- column stays whole.
	Left, Right                          key.Binding
	Focus, Inject, Steer, Attach, Kill   key.Binding
	Delete                               key.Binding
	Diff, Land, Close                    key.Binding
	Filter, Sort, ToggleFinished, Reload key.Binding
	Help, Quit, Confirm, Cancel          key.Binding
}

// Default is the key map.
func Default() KeyMap {
	b := func(help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(keys[0], help))
	}
	named := func(label, help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(label, help))
	}
	return KeyMap{
		Up:             named("↑/k", "up", "up", "k"),
		Down:           named("↓/j", "down", "down", "j"),
		PageUp:         named("pgup", "page up", "pgup", "ctrl+u"),
		PageDown:       named("pgdn", "page down", "pgdown", "ctrl+d"),
		Top:            named("g/home", "top", "home", "g"),
		Bottom:         named("G/end", "bottom, follow", "end", "G"),
		Left:           named("←/→", "scroll a diff sideways", "left"),
		Right:          named("→", "scroll right", "right"),
		Focus:          named("tab", "switch pane", "tab", "enter", "shift+tab"),
		Inject:         b("send a follow-up", "i"),
		Steer:          b("stop turn, send", "I"),
		Attach:         b("work in its CLI", "A"),
		Kill:           b("kill", "x"),
		Delete:         b("delete finished", "d"),
		Diff:           b("view the diff", "v"),
		Land:           b("land the change", "L"),
		Close:          named("esc/q", "close the diff", "esc", "q"),
		Filter:         b("filter", "/"),
		Sort:           b("cycle sort", "s"),
		ToggleFinished: b("show/hide finished", "a"),
		Reload:         b("reload", "r"),
		Help:           b("help", "?"),
		Quit:           b("quit", "q", "ctrl+c"),
		Confirm:        b("confirm", "y", "enter"),
		Cancel:         b("cancel", "esc", "n"),
	}
}

// ShortHelp is the one-line help.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Focus, k.Inject, k.Kill, k.Filter, k.Help, k.Quit}
}

// DiffHelp is the one-line help while the diff view is open, in words
// short enough for 80 columns.
func (k KeyMap) DiffHelp() []key.Binding {
	scroll, page, side, land, done := k.Up, k.PageDown, k.Left, k.Land, k.Close
	scroll.SetHelp("↑/↓", "scroll")
	page.SetHelp("pgup/pgdn", "page")
	side.SetHelp("←/→", "sideways")
	land.SetHelp("L", "land")
	done.SetHelp("esc/q", "close")
	return []key.Binding{scroll, page, side, land, done, k.Help}
}

// FullHelp is the help overlay.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		append(k.Moves(), k.Left),
		{k.Focus, k.Inject, k.Steer, k.Attach, k.Kill, k.Delete, k.Diff, k.Land, k.Close},
		{k.Filter, k.Sort, k.ToggleFinished, k.Reload, k.Help, k.Quit},
	}
}

// Moves are the keys that move through a pane's rows or lines: up, down,
// page, top, bottom.
func (k KeyMap) Moves() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}
}

// Scroll moves a viewport by the scrolling keys (up, down, page, top,
// bottom), for the panes that show long text; it reports whether msg was
// one of them.
func (k KeyMap) Scroll(msg tea.KeyMsg, vp *viewport.Model) bool {
	switch {
	case key.Matches(msg, k.Up):
		vp.ScrollUp(1)
	case key.Matches(msg, k.Down):
		vp.ScrollDown(1)
	case key.Matches(msg, k.PageUp):
		vp.HalfPageUp()
	case key.Matches(msg, k.PageDown):
		vp.HalfPageDown()
	case key.Matches(msg, k.Top):
		vp.GotoTop()
	case key.Matches(msg, k.Bottom):
		vp.GotoBottom()
	default:
		return false
	}
	return true
}

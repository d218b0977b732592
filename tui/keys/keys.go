// Package keys is the dashboard's key map, shared by the panes and the
// help overlay.
package keys

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every binding of the dashboard.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	Focus, Inject, Kill, Delete             key.Binding
	Filter, Sort, ToggleFinished, Reload    key.Binding
	Help, Quit, Confirm, Cancel             key.Binding
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
		Focus:          named("tab", "switch pane", "tab", "enter", "shift+tab"),
		Inject:         b("send a follow-up", "i"),
		Kill:           b("kill", "x"),
		Delete:         b("delete finished", "d"),
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

// FullHelp is the help overlay.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Focus, k.Inject, k.Kill, k.Delete},
		{k.Filter, k.Sort, k.ToggleFinished, k.Reload, k.Help, k.Quit},
	}
}

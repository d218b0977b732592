package tui

import (
	"context"
	"testing"

	"github.com/zwarm/zwarm/tui/common"
)

// Every key a pane says it takes is in the help overlay, in the same
// words. (The prompt's line says its own keys.)
func TestPaneKeysAreInTheHelp(t *testing.T) {
	m := New(context.Background(), Options{})
	shown := map[string]bool{}
	for _, col := range m.FullHelp() {
		for _, b := range col {
			shown[b.Help().Key+" "+b.Help().Desc] = true
		}
	}
	panes := map[string]common.Component{"header": &m.header, "sessionlist": &m.list, "detail": &m.detail, "diffview": &m.diff}
	for name, p := range panes {
		for _, col := range p.FullHelp() {
			for _, b := range col {
				if h := b.Help(); !shown[h.Key+" "+h.Desc] {
					t.Errorf("%s takes %q (%s), which the help does not show", name, h.Key, h.Desc)
				}
			}
		}
	}
}

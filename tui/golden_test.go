package tui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// The whole screen at the two sizes that matter: the smallest supported
// terminal and a common large one. ASCII profile, fixed clock, fixed ids.
func TestScreenGoldens(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := standard(t).newModel(size[0], size[1])
			golden.RequireEqual(t, []byte(m.View()))
		})
	}
}

func TestHelpOverlayGolden(t *testing.T) {
	m := press(t, standard(t).newModel(80, 24), "?")
	golden.RequireEqual(t, []byte(m.View()))
}

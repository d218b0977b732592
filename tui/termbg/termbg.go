// Package termbg tells the terminal styling library whether the terminal's
// background is dark before anything can ask the terminal itself.
//
// Bubble Tea 1.x asks the terminal for its background colour (OSC 11,
// then a cursor position report) in its package init, so that every
// program linking it, whatever it is about to do, writes those queries to
// a terminal on stdout and waits up to 5 s for answers that a terminal
// which does not reply (script(1), some CI log capturers, serial consoles)
// never sends. Nothing in zwarm's main package runs before that init.
//
// This package is its own module with a path that sorts before
// github.com/charmbracelet/bubbletea: Go initialises packages in import
// path order among those whose imports are initialised, so this init runs
// right after Lip Gloss's and before Bubble Tea's. Once the background is
// set, Lip Gloss never asks the terminal for it. The dashboard is the only
// part of zwarm that uses the background (the help line's shades of grey);
// it takes it from COLORFGBG as terminals that set it report it, and
// otherwise assumes a dark background.
package termbg

import (
	"os"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

func init() {
	lipgloss.SetHasDarkBackground(Dark(os.Getenv("COLORFGBG")))
}

// Dark reports whether COLORFGBG ("fg;bg" or "fg;default;bg", ANSI colour
// numbers) names a dark background; when it is unset or unreadable the
// background is taken to be dark, as Lip Gloss does when a terminal does
// not answer.
func Dark(colorfgbg string) bool {
	f := strings.Split(colorfgbg, ";")
	if len(f) < 2 {
		return true
	}
	n, err := strconv.Atoi(f[len(f)-1])
	if err != nil || n < 0 || n > 255 {
		return true
	}
	_, _, l := termenv.ConvertToRGB(termenv.ANSI256Color(n)).Hsl()
	return l < 0.5
}

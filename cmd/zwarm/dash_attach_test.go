package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// A in the dashboard gives the terminal to zwarm attach: the person's CLI
// runs in the session's thread, Ctrl+C typed there is the CLI's and
// attach's alone (the dashboard, whose own Ctrl+C quits it, stays), and
// the dashboard comes back when the CLI ends, the session settled again
// with its attached span, drawn to the terminal's size then (a resize
// meanwhile was signalled to the CLI's process group alone); a Ctrl+Z
// there never leaves it stopped.
func TestDashboardAttachGivesTheTerminalAndTakesItBack(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "first"))[0]
	w.setScript(fakeagent.Completes("after", 20), fakeThread, []fakeagent.Step{
		fakeagent.Out("the person's CLI, in the thread"), {"wait_file": filepath.Join(t.TempDir(), "never")}})
	tm := startTmux(t, w, nil, 120, 30, bins.zwarm, "dash")
	tm.waitFor("the dashboard", "tab switch pane", 30*time.Second)
	tm.typeText("A")
	screen := tm.waitFor("the CLI", "the person's CLI, in the thread", 30*time.Second)
	if strings.Contains(screen, "tab switch pane") {
		t.Fatalf("the dashboard is still drawn over the CLI:\n%s", screen)
	}
	if s := w.show(id); s.Status() != record.StatusAttached {
		t.Fatalf("while in the CLI: %s", s.Status())
	}
	tm.run("resize-window", "-t", "z", "-x", "80", "-y", "24")
	// Ctrl+Z stops the CLI and the attach, which nobody could bring back
	// to the foreground: they are continued, and Ctrl+C still ends them.
	tm.typeText("", "C-z")
	time.Sleep(500 * time.Millisecond)
	tm.typeText("", "C-c")
	screen = tm.waitFor("the dashboard back", "back from "+record.ShortID(id), 30*time.Second)
	if strings.Contains(screen, "zwarm-exit=") {
		t.Fatalf("Ctrl+C in the CLI ended the dashboard:\n%s", screen)
	}
	// At 80 columns the table has no RUNTIME column; at 120 it had one.
	if strings.Contains(screen, "RUNTIME") {
		t.Fatalf("the dashboard came back drawn for its old size:\n%s", screen)
	}
	if s := w.show(id); s.Status() != record.StatusCompleted || len(s.Attached) != 1 || s.Attached[0].End == nil {
		t.Fatalf("after: %s, spans %+v", s.Status(), s.Attached)
	}
	tm.typeText("q")
	if screen := tm.waitFor("the dashboard to quit", "zwarm-exit=", 30*time.Second); !strings.Contains(screen, "zwarm-exit=0") {
		t.Fatalf("quitting after the attach:\n%s", screen)
	}
}

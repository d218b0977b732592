package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// rawOnTerminal runs zwarm on a pseudo-terminal cols wide and returns
// every byte it wrote there, carriage returns included.
func (w *world) rawOnTerminal(cols int, env []string, args ...string) string {
	w.t.Helper()
	term := w.startOnTerminal(cols, env, args...)
	term.exit()
	return term.buf.String()
}

// rawOnTerminalThinking is rawOnTerminal for an orchestrate whose first
// model reply is held until released is closed: it is closed once the
// terminal shows the model thinking, so that the spinner has drawn.
func (w *world) rawOnTerminalThinking(cols int, env []string, release chan struct{}, args ...string) string {
	w.t.Helper()
	term := w.startOnTerminal(cols, env, args...)
	term.waitFor("orchestrate's spinner while the model's reply is held", "the model is thinking")
	close(release)
	term.exit()
	return term.buf.String()
}

var csi = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")

// screenLines is what stays on a terminal of raw output, line by line: a
// carriage return goes back to the start of the line, escape sequences
// take no room.
func screenLines(raw string) []string {
	var out []string
	for _, l := range strings.Split(raw, "\n") {
		if i := strings.LastIndexByte(l, '\r'); i >= 0 {
			l = l[i+1:]
		}
		out = append(out, csi.ReplaceAllString(l, ""))
	}
	return out
}

func fitsWidth(t *testing.T, what, raw string, cols int) {
	t.Helper()
	for _, l := range screenLines(raw) {
		if runewidth.StringWidth(l) > cols {
			t.Errorf("%s: a line is %d wide at %d columns: %q", what, runewidth.StringWidth(l), cols, l)
		}
	}
}

// On a terminal, orchestrate fits its steps to the width, colours them,
// and shows the model thinking on stderr; NO_COLOR drops the colours,
// and piped there is neither colour nor spinner. runs and runs show fit
// too.
func TestOrchestrateOnATerminal(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	long := "write table-driven tests for the token bucket limiter, covering refill, burst and the 429 answer with Retry-After"
	// The first reply of each run is held until slow is closed: the
	// model thinks for a while, and the spinner shows it.
	script := func(task string, slow chan struct{}) {
		srv.On(task, fakemodel.Reply{Stall: slow, Reasoning: "one worker can do it all, and the tests first", Calls: []fakemodel.Call{fcall("delegate", map[string]any{"task": long})}},
			replyCalls(fcall("wait", map[string]any{"mode": "all"})),
			replyCalls(fcall("finish", map[string]any{"summary": long + "; " + long})))
	}
	slow := make(chan struct{})
	script("TERM ONE", slow)
	raw := w.rawOnTerminalThinking(60, nil, slow, "orchestrate", "TERM ONE")
	fitsWidth(t, "orchestrate", raw, 60)
	for _, want := range []string{"the model is thinking", cli.Cyan + "→ delegate", cli.Green + "completed" + cli.Reset + " after 3 steps", "Retry-After"} {
		if !strings.Contains(raw, want) {
			t.Errorf("orchestrate on a terminal lacks %q:\n%q", want, raw)
		}
	}
	slow = make(chan struct{})
	script("TERM TWO", slow)
	raw = w.rawOnTerminalThinking(60, []string{"NO_COLOR=1"}, slow, "orchestrate", "TERM TWO")
	if sgr.MatchString(raw) || !strings.Contains(raw, "→ delegate") {
		t.Errorf("NO_COLOR: want no colour and the step \"→ delegate\"; the terminal got:\n%q", raw)
	}
	// Piped there is no spinner to wait for: the reply is held for a
	// moment once asked for, room for a spinner that should not be
	// there to draw (its absence is what is checked).
	slow = make(chan struct{})
	asked := len(srv.Requests()) + 1
	go func() {
		defer close(slow)
		srv.WaitRequests(t.Context(), asked)
		time.Sleep(600 * time.Millisecond)
	}()
	script("TERM THREE", slow)
	r := w.zwarm("orchestrate", "TERM THREE")
	if r.code != 0 || strings.Contains(r.stdout+r.stderr, "\x1b") || strings.Contains(r.stderr, "thinking") || !strings.Contains(r.stdout, long) {
		t.Errorf("piped: want exit 0, no escape codes, no spinner on stderr and the summary on stdout; exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	raw = w.rawOnTerminal(60, nil, "runs")
	fitsWidth(t, "runs", raw, 60)
	if !strings.Contains(raw, cli.Green+"completed") || strings.Count(visible(raw), "completed") != 3 {
		t.Errorf("runs on a terminal:\n%s", visible(raw))
	}
	id := w.runs()[0].ID
	raw = w.rawOnTerminal(60, nil, "runs", "show", id)
	fitsWidth(t, "runs show", raw, 60)
	if !strings.Contains(raw, cli.Cyan+"→ delegate") || !strings.Contains(raw, "completed after 3 steps") {
		t.Errorf("runs show on a terminal:\n%s", visible(raw))
	}
}

package main

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/mattn/go-runewidth"
	"github.com/zwarm/zwarm/adapters/testsupport/fakemodel"
)

// rawOnTerminal runs zwarm on a pseudo-terminal cols wide and returns
// every byte it wrote there, carriage returns included.
func (w *world) rawOnTerminal(cols int, env []string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(bins.zwarm, args...)
	cmd.Dir = w.work
	cmd.Env = append(append(w.env(), "TERM=tmux-256color"), env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: 40})
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf.ReadFrom(f)
	}()
	cmd.Wait()
	<-done
	return buf.String()
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
	script := func(task string) {
		slow := make(chan struct{})
		time.AfterFunc(600*time.Millisecond, func() { close(slow) })
		srv.On(task, fakemodel.Reply{Stall: slow, Reasoning: "one worker can do it all, and the tests first", Calls: []fakemodel.Call{fcall("delegate", map[string]any{"task": long})}},
			replyCalls(fcall("wait", map[string]any{"mode": "all"})),
			replyCalls(fcall("finish", map[string]any{"summary": long + "; " + long})))
	}
	script("TERM ONE")
	raw := w.rawOnTerminal(60, nil, "orchestrate", "TERM ONE")
	fitsWidth(t, "orchestrate", raw, 60)
	for _, want := range []string{"the model is thinking", sgrCyan + "→ delegate", sgrGreen + "completed" + sgrReset + " after 3 steps", "Retry-After"} {
		if !strings.Contains(raw, want) {
			t.Errorf("orchestrate on a terminal lacks %q:\n%q", want, raw)
		}
	}
	script("TERM TWO")
	raw = w.rawOnTerminal(60, []string{"NO_COLOR=1"}, "orchestrate", "TERM TWO")
	if sgr.MatchString(raw) || !strings.Contains(raw, "→ delegate") {
		t.Errorf("NO_COLOR:\n%q", raw)
	}
	script("TERM THREE")
	r := w.zwarm("orchestrate", "TERM THREE")
	if r.code != 0 || strings.Contains(r.stdout+r.stderr, "\x1b") || strings.Contains(r.stderr, "thinking") || !strings.Contains(r.stdout, long) {
		t.Errorf("piped: exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	raw = w.rawOnTerminal(60, nil, "runs")
	fitsWidth(t, "runs", raw, 60)
	if !strings.Contains(raw, sgrGreen+"completed") || strings.Count(visible(raw), "completed") != 3 {
		t.Errorf("runs on a terminal:\n%s", visible(raw))
	}
	id := w.runs()[0].ID
	raw = w.rawOnTerminal(60, nil, "runs", "show", id)
	fitsWidth(t, "runs show", raw, 60)
	if !strings.Contains(raw, sgrCyan+"→ delegate") || !strings.Contains(raw, "completed after 3 steps") {
		t.Errorf("runs show on a terminal:\n%s", visible(raw))
	}
}

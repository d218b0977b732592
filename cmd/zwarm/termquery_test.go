package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Terminal queries: the background colour (OSC 11) and the cursor position
// (DSR), which a terminal answers on stdin. Where nothing answers (script,
// CI log capturers, serial consoles) whoever asked waits for the answer.
var termQueries = []string{"\x1b]11;?", "\x1b[6n"}

// onSilentTerminal runs zwarm on a pseudo-terminal that answers nothing,
// as an xterm outside any multiplexer, and returns all it wrote there. If
// ready is set, q is typed once the output contains it (to quit the
// dashboard). A command still running after a generous bound is killed and
// fails the test.
func (w *world) onSilentTerminal(ready string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(bins.zwarm, args...)
	cmd.Dir = w.Work
	for _, e := range w.env() {
		// CI set makes the terminal library skip its queries; TERM
		// naming a multiplexer or dumb too.
		if !strings.HasPrefix(e, "CI=") && !strings.HasPrefix(e, "TERM=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, "TERM=xterm-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	buf, read := readAll(f)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	bound := time.After(60 * time.Second)
	if ready != "" {
		for typed := false; !typed; {
			select {
			case <-time.After(20 * time.Millisecond):
				typed = strings.Contains(buf.String(), ready)
			case <-bound:
				cmd.Process.Kill()
				<-exited
				w.t.Fatalf("zwarm %v never showed %q:\n%q", args, ready, buf.String())
			}
		}
		f.Write([]byte("q"))
	}
	select {
	case err := <-exited:
		if err != nil {
			w.t.Errorf("zwarm %v: %v", args, err)
		}
	case <-bound:
		cmd.Process.Kill()
		<-exited
		w.t.Fatalf("zwarm %v still running after 60s on a terminal that answers nothing", args)
	}
	f.Close()
	<-read
	return buf.String()
}

// No command asks the terminal anything: on a terminal that does not
// answer, every command would otherwise wait for answers that never come.
// The dashboard takes the background from COLORFGBG, never from the
// terminal.
func TestCommandsDoNotQueryTheTerminal(t *testing.T) {
	w := newWorld(t)
	id := w.spawn("task")
	w.ok("wait", id)
	for _, c := range []struct {
		ready string
		args  []string
	}{
		{"", []string{"version"}},
		{"", []string{"ls"}},
		{"", []string{"show", id}},
		{"task", []string{"dash"}},
	} {
		got := w.onSilentTerminal(c.ready, c.args...)
		for _, q := range termQueries {
			if strings.Contains(got, q) {
				t.Errorf("zwarm %v asked the terminal %q:\n%q", c.args, q, got)
			}
		}
	}
}

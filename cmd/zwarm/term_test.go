package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/mattn/go-runewidth"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// onTerminal runs zwarm on a pseudo-terminal cols wide, as a person at a
// terminal would, and returns what it wrote there (carriage returns
// dropped) and its exit code. input, if any, is typed once the command
// has asked (or after a moment).
//
// TERM is fixed (a 256-colour terminal) so that what is drawn does not
// depend on the environment the tests run in.
func (w *world) onTerminal(cols int, env []string, input string, args ...string) (string, int) {
	w.t.Helper()
	term := w.startOnTerminal(cols, env, args...)
	if input != "" {
		// A ceiling, not a wait: the answer is typed as soon as the
		// question shows (and typed anyway after it, for the test to
		// report what the command did with no question asked).
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if strings.Contains(term.buf.String(), "[y/N]") {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		io.WriteString(term.f, input)
	}
	code := term.exit()
	return strings.ReplaceAll(term.buf.String(), "\r", ""), code
}

// terminal is zwarm running on a pseudo-terminal: buf is what it has
// written there so far.
type terminal struct {
	w      *world
	cmd    *exec.Cmd
	f      *os.File
	buf    *lockedBuffer
	read   <-chan struct{} // closed once all it wrote is in buf
	exited chan struct{}   // closed once it has exited, with err
	err    error
}

// startOnTerminal starts zwarm on a pseudo-terminal as onTerminal does,
// and returns while it runs. The test's end stops it, if the test has
// not waited for it (exit).
func (w *world) startOnTerminal(cols int, env []string, args ...string) *terminal {
	w.t.Helper()
	cmd := exec.Command(bins.zwarm, args...)
	cmd.Dir = w.Work
	cmd.Env = append(append(w.env(), "TERM=tmux-256color"), env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: 40})
	if err != nil {
		w.t.Fatal(err)
	}
	term := &terminal{w: w, cmd: cmd, f: f, exited: make(chan struct{})}
	term.buf, term.read = readAll(f)
	go func() { term.err = cmd.Wait(); close(term.exited) }()
	w.t.Cleanup(func() {
		select {
		case <-term.exited:
		default:
			cmd.Process.Kill()
			<-term.exited
		}
		f.Close()
	})
	return term
}

// text is what the command has written so far, carriage returns dropped.
func (term *terminal) text() string { return strings.ReplaceAll(term.buf.String(), "\r", "") }

// waitFor waits until the terminal shows want (carriage returns dropped),
// for at most a minute.
func (term *terminal) waitFor(what, want string) {
	term.w.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(term.text(), want) {
		if time.Now().After(deadline) {
			term.w.t.Fatalf("%s: waited a minute for the terminal to show %q; it shows:\n%q", what, want, term.text())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exit waits for the command to end and returns its exit code (-1 if a
// signal ended it) once all it wrote is in buf. Its ceiling, two minutes,
// is for a whole command (an agent's turn included), not one event.
func (term *terminal) exit() int {
	term.w.t.Helper()
	const limit = 2 * time.Minute
	select {
	case <-term.exited:
	case <-time.After(limit):
		term.cmd.Process.Kill()
		<-term.exited
		term.w.t.Fatalf("zwarm %s had not ended %s on; the terminal shows:\n%q", strings.Join(term.cmd.Args[1:], " "), limit, term.text())
	}
	select {
	case <-term.read:
	case <-time.After(time.Minute):
		term.w.t.Fatalf("zwarm %s exited, but its terminal stayed open a minute on (a process it started holds it); it shows:\n%q", strings.Join(term.cmd.Args[1:], " "), term.text())
	}
	term.f.Close()
	if ee, ok := term.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if term.err != nil {
		term.w.t.Fatal(term.err)
	}
	return 0
}

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// visible is what a terminal shows of text: SGR colour codes removed.
func visible(s string) string { return sgr.ReplaceAllString(s, "") }

func TestLsFitsTheTerminal(t *testing.T) {
	w := newWorld(t)
	long := "refactor the payment service so that retries are idempotent and every handler logs its request id"
	w.ok("spawn", "--wait", "-m", "gpt-5.1-codex-mini", long)
	w.ok("spawn", "--wait", "-m", "gpt-5.1-codex", "short task")
	for _, cols := range []int{80, 200} {
		out, code := w.onTerminal(cols, nil, "", "ls")
		if code != 0 {
			t.Fatalf("%d columns: exit %d\n%s", cols, code, out)
		}
		lines := strings.Split(strings.TrimRight(visible(out), "\n"), "\n")
		if len(lines) != 5 || !strings.Contains(lines[0], "2 completed") || !strings.Contains(lines[0], "tokens") || lines[1] != "" {
			t.Fatalf("%d columns: summary, blank, header, rows:\n%s", cols, visible(out))
		}
		for _, l := range lines {
			if runewidth.StringWidth(l) > cols {
				t.Errorf("%d columns: a line is %d wide: %q", cols, runewidth.StringWidth(l), l)
			}
		}
		// The adapter and the whole model name stay; the task absorbs the rest.
		for _, want := range []string{"ADAPTER", "gpt-5.1-codex-mini", "completed*", "refactor the payment"} {
			if !strings.Contains(out, want) {
				t.Errorf("%d columns: no %q in\n%s", cols, want, visible(out))
			}
		}
		cut := strings.Contains(out, "refactor the payment service…") || !strings.Contains(out, long)
		if cols == 80 && !cut || cols == 200 && !strings.Contains(out, long) {
			t.Errorf("%d columns: task column:\n%s", cols, visible(out))
		}
		if !strings.Contains(out, cli.Green+"completed*") {
			t.Errorf("%d columns: the status is not coloured:\n%q", cols, out)
		}
	}
	out, _ := w.onTerminal(120, []string{"NO_COLOR=1"}, "", "ls")
	if strings.Contains(out, "\x1b[") {
		t.Fatalf("NO_COLOR: %q", out)
	}
}

// On a terminal, a wait shows what it awaits on stderr; piped, nothing.
func TestWaitShowsProgressOnATerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// The command runs until the wait has shown it running.
	gate := filepath.Join(t.TempDir(), "go")
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o600) })
	w.setScript(append([]fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		fakeagent.Out(`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"make slow-test","status":"in_progress"}}`),
		{"wait_file": gate},
	}, fakeagent.Completes("done waiting", 5)...))
	id := w.spawn("take a while")
	term := w.startOnTerminal(100, nil, "wait", id)
	term.waitFor("the wait's progress", "$ make slow-test  (running)")
	touch(t, gate)
	code := term.exit()
	out := term.text()
	if code != 0 || !strings.Contains(out, "waiting for "+id[:8]) || !strings.Contains(out, "$ make slow-test  (running)") ||
		!strings.Contains(out, "done waiting") {
		t.Fatalf("want exit 0 having shown \"waiting for %s\", the running command and the last message \"done waiting\"; exit %d, the terminal showed:\n%q", id[:8], code, out)
	}
	id = w.spawn("take a while")
	if r := w.zwarm("wait", id); r.code != 0 || r.stderr != "" || strings.Contains(r.stdout, "waiting for") {
		t.Fatalf("piped: %+v", r)
	}
}

// rm --all asks on a terminal; no answer but yes deletes.
func TestBulkDeleteAsksOnATerminal(t *testing.T) {
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "task"))[0]
	out, code := w.onTerminal(100, nil, "n\n", "rm", "--all")
	if code != 1 || !strings.Contains(out, "delete 1 sessions and everything they recorded? [y/N]") || !strings.Contains(out, "nothing deleted") {
		t.Fatalf("answer n: exit %d %q", code, out)
	}
	if len(w.ls()) != 1 {
		t.Fatal("deleted after n")
	}
	if out := w.ok("rm", "--all", "--dry-run"); out != "would remove "+id+"\n" {
		t.Fatalf("dry run: %q", out)
	}
	out, code = w.onTerminal(100, nil, "y\n", "rm", "--all")
	if code != 0 || !strings.Contains(out, "removed "+id) || len(w.ls()) != 0 {
		t.Fatalf("answer y: exit %d %q", code, out)
	}
	if r := w.zwarm("rm", "--all"); r.code != 0 || !strings.Contains(r.stderr, "no settled sessions to delete") {
		t.Fatalf("nothing to delete: %+v", r)
	}
}

// dashOnTerminal runs a dashboard command on a terminal, types keys once
// it has drawn, and returns what it drew; it fails the test if the
// dashboard does not quit.
func dashOnTerminal(t *testing.T, cmd *exec.Cmd, keys string) string {
	t.Helper()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 100, Rows: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mu sync.Mutex
	var buf bytes.Buffer
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			mu.Lock()
			buf.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	drawn := func() bool {
		mu.Lock()
		defer mu.Unlock()
		// The help line may be in colour, its keys and words apart.
		return strings.Contains(visible(buf.String()), "q quit")
	}
	// A ceiling, not a wait: the keys are typed as soon as it has drawn.
	deadline := time.Now().Add(time.Minute)
	for !drawn() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	io.WriteString(f, keys)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("dashboard: %v", err)
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-exited
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the dashboard had not quit a minute after %q was typed; it drew:\n%q", keys, buf.String())
	}
	mu.Lock()
	defer mu.Unlock()
	return buf.String()
}

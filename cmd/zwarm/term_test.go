package main

import (
	"bytes"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/mattn/go-runewidth"
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
	cmd := exec.Command(bins.zwarm, args...)
	cmd.Dir = w.work
	cmd.Env = append(append(w.env(), "TERM=tmux-256color"), env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: 40})
	if err != nil {
		w.t.Fatal(err)
	}
	defer f.Close()
	buf, done := readAll(f)
	if input != "" {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if strings.Contains(buf.String(), "[y/N]") {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		io.WriteString(f, input)
	}
	err = cmd.Wait()
	<-done
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return strings.ReplaceAll(buf.String(), "\r", ""), code
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
		if !strings.Contains(out, sgrGreen+"completed*") {
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
	w.setScript(append([]step{
		out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		out(`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"make slow-test","status":"in_progress"}}`),
		{"sleep_ms": 1200},
	}, completes("done waiting", 5)...))
	id := w.spawn("take a while")
	out, code := w.onTerminal(100, nil, "", "wait", id)
	if code != 0 || !strings.Contains(out, "waiting for "+id[:8]) || !strings.Contains(out, "$ make slow-test  (running)") ||
		!strings.Contains(out, "done waiting") {
		t.Fatalf("exit %d:\n%q", code, out)
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
	deadline := time.Now().Add(10 * time.Second)
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
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the dashboard did not quit on %q; it drew:\n%q", keys, buf.String())
	}
	mu.Lock()
	defer mu.Unlock()
	return buf.String()
}

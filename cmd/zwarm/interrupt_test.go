package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// readAll collects what a terminal's program writes to f until it is
// closed; done closes then.
func readAll(f io.Reader) (buf *lockedBuffer, done <-chan struct{}) {
	buf = &lockedBuffer{}
	c := make(chan struct{})
	go func() {
		defer close(c)
		io.Copy(buf, f)
	}()
	return buf, c
}

// watchesFiles reports whether pid has an inotify descriptor open: the
// command has started and is following the state dir, so a signal now
// reaches its handler and not the Go runtime's default.
func watchesFiles(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if l, _ := os.Readlink(filepath.Join(dir, e.Name())); strings.Contains(l, "inotify") {
			return true
		}
	}
	return false
}

// exitOf waits for cmd and returns its exit code, failing the test if it
// does not end within a minute or was ended by the signal itself.
func exitOf(t *testing.T, cmd *exec.Cmd, out fmt.Stringer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			if ee.ExitCode() < 0 {
				t.Fatalf("%v died of %v instead of exiting\n%s", cmd.Args[1:], err, out.String())
			}
			return ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not end after the signal\n%s", cmd.Args[1:], out.String())
		return -1
	}
}

// Every command that blocks ends with exit 130 when SIGINT or SIGTERM
// interrupts it, whatever it was doing: following a log, waiting for a
// session or a follow-up, watching, drawing the dashboard, serving MCP.
func TestInterruptedCommandsExit130(t *testing.T) {
	type blocking struct {
		name string
		// args is the command line to interrupt; ready reports when it is
		// blocked in its work.
		args  func(w *world, id string) []string
		ready func(pid int, out string) bool
	}
	following := func(pid int, _ string) bool { return watchesFiles(pid) }
	cases := []blocking{
		{name: "logs -f", args: func(_ *world, id string) []string { return []string{"logs", "-f", id} }, ready: following},
		{name: "wait", args: func(_ *world, id string) []string { return []string{"wait", id} }, ready: following},
		{name: "spawn --wait", args: func(_ *world, _ string) []string { return []string{"spawn", "--wait", "--", "another"} }, ready: following},
		{name: "inject --wait", args: func(_ *world, id string) []string { return []string{"inject", "--wait", id, "and then"} }, ready: following},
		{name: "watch", args: func(_ *world, id string) []string { return []string{"watch", id} }, ready: following},
		{name: "watch --json", args: func(_ *world, id string) []string { return []string{"watch", "--json", "--all"} }, ready: following},
		// A follow-up to a finished session starts its next turn, which
		// blocks: the interruption may come while the turn's supervisor
		// starts or while it is waited for.
		{name: "inject --wait (next turn)", args: func(w *world, _ string) []string {
			done := w.spawn("quick")
			w.ok("wait", done)
			return []string{"inject", "--wait", done, "and then"}
		}, ready: following},
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		for _, c := range cases {
			t.Run(c.name+" "+sig.String(), func(t *testing.T) {
				t.Parallel()
				w, id := blockedWorld(t)
				cmd := exec.Command(bins.zwarm, c.args(w, id)...)
				cmd.Dir, cmd.Env = w.Work, w.env()
				var out lockedBuffer
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				sessionstest.Eventually(t, c.name+" to block", func() bool { return c.ready(cmd.Process.Pid, out.String()) })
				cmd.Process.Signal(sig)
				if code := exitOf(t, cmd, &out); code != cli.ExitInterrupted {
					t.Fatalf("%s on %s: exit %d, want %d\n%s", sig, c.name, code, cli.ExitInterrupted, out.String())
				}
				if !strings.Contains(out.String(), "zwarm: interrupted") {
					t.Errorf("%s on %s printed %q, want it to say it was interrupted", sig, c.name, out.String())
				}
			})
		}

		t.Run("mcp "+sig.String(), func(t *testing.T) {
			t.Parallel()
			w, _ := blockedWorld(t)
			c := startMCP(t, w)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c.initialize(ctx)
			c.cmd.Process.Signal(sig)
			for range c.lines {
			}
			if code := exitOf(t, c.cmd, &c.stderr); code != cli.ExitInterrupted {
				t.Fatalf("%s on mcp: exit %d, want %d\n%s", sig, code, cli.ExitInterrupted, c.stderr.String())
			}
		})

		t.Run("dash "+sig.String(), func(t *testing.T) {
			t.Parallel()
			w, _ := blockedWorld(t)
			cmd := exec.Command(bins.zwarm, "dash")
			cmd.Dir, cmd.Env = w.Work, append(w.env(), "TERM=tmux-256color")
			f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 100, Rows: 30})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var out lockedBuffer
			go io.Copy(&out, f)
			sessionstest.Eventually(t, "the dashboard to draw", func() bool { return strings.Contains(out.String(), "ADAPTER") })
			cmd.Process.Signal(sig)
			if code := exitOf(t, cmd, &out); code != cli.ExitInterrupted {
				t.Fatalf("%s on dash: exit %d, want %d", sig, code, cli.ExitInterrupted)
			}
		})
	}
}

// Ctrl+C typed in the dashboard (a key in its raw terminal, not a
// signal) ends it as a signal does, 130; q quits it, 0.
func TestDashQuitsWithCtrlCAs130AndQAs0(t *testing.T) {
	t.Parallel()
	w, _ := blockedWorld(t)
	for key, want := range map[string]int{"\x03": cli.ExitInterrupted, "q": cli.ExitOK} {
		cmd := exec.Command(bins.zwarm, "dash")
		cmd.Dir, cmd.Env = w.Work, append(w.env(), "TERM=tmux-256color")
		f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 100, Rows: 30})
		if err != nil {
			t.Fatal(err)
		}
		var out lockedBuffer
		go io.Copy(&out, f)
		sessionstest.Eventually(t, "the dashboard to draw", func() bool { return strings.Contains(out.String(), "ADAPTER") })
		io.WriteString(f, key)
		code := exitOf(t, cmd, &out)
		f.Close()
		if code != want {
			t.Errorf("%q in the dashboard: exit %d, want %d", key, code, want)
		}
	}
}

// blockedWorld is a world with one session whose turn runs until the test
// ends, so every command that waits for it blocks.
func blockedWorld(t *testing.T) (*world, string) {
	w := newWorld(t)
	w.setScript([]fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		fakeagent.Out(`{"type":"turn.started"}`),
		{"wait_file": filepath.Join(t.TempDir(), "never")},
	}, "quick", fakeagent.Completes("quick", 10))
	return w, w.spawn("block")
}

// childWith returns a child of pid whose command line has arg, or 0.
func childWith(pid int, arg string) int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			cmdline, _ := os.ReadFile("/proc/" + c + "/cmdline")
			if strings.Contains(string(cmdline), "\x00"+arg+"\x00") {
				n, _ := strconv.Atoi(c)
				return n
			}
		}
	}
	return 0
}

// Ctrl+C while a follow-up starts the next turn is never a failure of the
// work ("signal: killed", 1): the supervisor being started is not the
// terminal's to kill, so the follow-up is delivered whole and inject says
// so (0), or, caught before anything changed, it is an interruption (130).
func TestInterruptWhileStartingATurn(t *testing.T) {
	t.Parallel()
	w, _ := blockedWorld(t)
	caught, last := 0, ""
	for try := 0; try < 20 && caught < 3; try++ {
		done := w.spawn("quick")
		w.ok("wait", done)
		cmd := exec.Command(bins.zwarm, "inject", done, "and then")
		cmd.Dir, cmd.Env = w.Work, w.env()
		var out lockedBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		starting := 0
		for i := 0; i < 5000 && starting == 0 && cmd.ProcessState == nil; i++ {
			starting = childWith(cmd.Process.Pid, "--detach")
			if starting == 0 {
				time.Sleep(200 * time.Microsecond)
			}
		}
		if starting == 0 {
			cmd.Wait() // the turn started before it was seen starting
			continue
		}
		cmd.Process.Signal(syscall.SIGINT)
		caught++
		code := exitOf(t, cmd, &out)
		if !(code == cli.ExitInterrupted || code == 0 && strings.Contains(out.String(), "resumed as turn 2")) {
			t.Fatalf("SIGINT while the next turn's supervisor started: exit %d, want %d, or 0 saying it resumed\n%s", code, cli.ExitInterrupted, out.String())
		}
		// Delivered whole, the follow-up's turn runs (this world's agent
		// blocks in it); interrupted, the session is as it was.
		if code == 0 {
			sessionstest.Eventually(t, "the follow-up's turn running", func() bool {
				s := w.record(done)
				return len(s.Turns) == 2 && s.Turns[1].Prompt == "and then" && s.Status() == record.StatusRunning
			})
			w.zwarm("kill", done)
		} else if s := w.record(done); len(s.Turns) != 1 || s.Status() != record.StatusCompleted {
			t.Fatalf("the interrupted follow-up changed the session: %s (%s) with %d turns", s.Status(), s.Error, len(s.Turns))
		}
		last = out.String()
	}
	if caught == 0 {
		t.Fatal("never caught inject while it started the next turn")
	}
	t.Logf("interrupted %d follow-ups while their turn started; the last said %q", caught, last)
}

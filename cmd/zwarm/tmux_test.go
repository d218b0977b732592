package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tmuxTerm is a terminal emulator running one command, as a person's
// terminal would: tmux, on a server of its own. Interactive CLIs ask the
// terminal things (its size, the cursor's position, its colours) and
// wait for the answers, which a bare pseudo-terminal never gives; tmux
// answers them, draws the screen, and takes keys.
type tmuxTerm struct {
	t    *testing.T
	sock string
	env  []string
}

var tmuxServers atomic.Int64

// needTmux returns tmux's path; without it the test is skipped, or fails
// under CI=true, as the real agent CLIs are.
func needTmux(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tmux is needed to drive an interactive CLI: %v", err)
		}
		t.Skipf("tmux is needed to drive an interactive CLI (CI=true makes this a failure): %v", err)
	}
	return path
}

// startTmux runs argv in the working dir on a terminal cols×rows, with
// the world's environment. When argv exits, the terminal shows
// "zwarm-exit=CODE" and stays, so what it printed can be read.
func startTmux(t *testing.T, w *world, env []string, cols, rows int, argv ...string) *tmuxTerm {
	t.Helper()
	needTmux(t)
	tm := &tmuxTerm{t: t, sock: fmt.Sprintf("zwarm-test-%d-%d", os.Getpid(), tmuxServers.Add(1))}
	for _, e := range append(w.env(), env...) {
		// Not a client of the tmux this test may run in.
		if !strings.HasPrefix(e, "TMUX=") && !strings.HasPrefix(e, "TMUX_PANE=") {
			tm.env = append(tm.env, e)
		}
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	shell := strings.Join(quoted, " ") + `; echo "zwarm-exit=$?"; exec sleep 3600`
	tm.run("-f", "/dev/null", "new-session", "-d", "-s", "z", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows),
		"-c", w.Work, "sh", "-c", shell)
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	return tm
}

func (tm *tmuxTerm) run(args ...string) string {
	tm.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-L", tm.sock}, args...)...)
	cmd.Env = tm.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is what the terminal shows now.
func (tm *tmuxTerm) screen() string { return tm.run("capture-pane", "-p", "-t", "z") }

// waitFor waits until the screen shows want, and returns the screen.
func (tm *tmuxTerm) waitFor(what, want string, limit time.Duration) string {
	tm.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		s := tm.screen()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("%s: %q never showed; the screen:\n%s", what, want, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// typeText types text, then keys (tmux key names: Enter, C-c, Escape).
func (tm *tmuxTerm) typeText(text string, keys ...string) {
	tm.t.Helper()
	if text != "" {
		tm.run("send-keys", "-t", "z", "-l", text)
	}
	if len(keys) > 0 {
		// A key right after the text could arrive in the same read as
		// the text, and a CLI may take "text\r" as a paste.
		time.Sleep(300 * time.Millisecond)
		tm.run(append([]string{"send-keys", "-t", "z"}, keys...)...)
	}
}

// shellPID is the pid of the shell the command runs under.
func (tm *tmuxTerm) shellPID() int {
	tm.t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(tm.run("list-panes", "-t", "z", "-F", "#{pane_pid}")))
	if err != nil {
		tm.t.Fatal(err)
	}
	return pid
}

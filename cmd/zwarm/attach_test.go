package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// fakeThread is the thread the fake agent reports; as a person's CLI
// (zwarm attach runs it with the thread as its prompt) it follows the
// script's entry for it.
const fakeThread = "0199a213-81c0-7800-8aa1-bbab2a035a53"

// Attach is refused, having changed nothing, for a session still running
// (exit 1, as a landing refused for it is, saying what to do) and where
// there is no terminal to work on (exit 2: the command line's).
func TestAttachRefusesARunningSession(t *testing.T) {
	t.Parallel()
	w, id := blockedWorld(t)
	sessionstest.Eventually(t, "the turn to run", func() bool { return w.show(id).Status() == record.StatusRunning })
	tm := startTmux(t, w, nil, 120, 30, bins.zwarm, "attach", id)
	screen := tm.waitFor("attach to exit", "zwarm-exit=", 30*time.Second)
	if !strings.Contains(screen, "zwarm-exit=1") || !strings.Contains(screen, "still running: wait, or attach --interrupt to stop its turn first") {
		t.Fatalf("attach to a running session:\n%s", screen)
	}
	if s := w.show(id); s.Status() != record.StatusRunning || len(s.Attached) != 0 {
		t.Fatalf("after the refusal: %s, spans %+v", s.Status(), s.Attached)
	}
	if r := w.zwarm("attach", id); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "attach needs a terminal") {
		t.Fatalf("attach without a terminal: %+v", r)
	}
}

// attach --interrupt stops the running turn (recorded interrupted), opens
// the CLI in the thread, and hands the session back when it exits.
func TestAttachInterruptsTheTurn(t *testing.T) {
	t.Parallel()
	w, id := blockedWorld(t)
	gate := filepath.Join(t.TempDir(), "gate")
	w.setScript(fakeagent.Completes("done", 10), "block", []fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), fakeagent.Out(`{"type":"turn.started"}`),
		{"wait_file": filepath.Join(t.TempDir(), "never")},
	}, fakeThread, []fakeagent.Step{fakeagent.Out("the person's CLI, in the thread"), {"wait_file": gate}})
	sessionstest.Eventually(t, "the turn to run", func() bool { s := w.show(id); return s.Status() == record.StatusRunning && s.ThreadID != "" })
	tm := startTmux(t, w, nil, 120, 30, bins.zwarm, "attach", "--interrupt", id)
	screen := tm.waitFor("the CLI", "the person's CLI, in the thread", 30*time.Second)
	if !strings.Contains(screen, "interrupting turn 1") {
		t.Fatalf("attach --interrupt said nothing of the turn:\n%s", screen)
	}
	s := w.show(id)
	if s.Status() != record.StatusAttached || s.Turns[0].Status() != record.StatusInterrupted || len(s.Turns) != 1 {
		t.Fatalf("while attached: %s, turns %+v", s.Status(), s.Turns)
	}
	touch(t, gate)
	screen = tm.waitFor("attach to exit", "zwarm-exit=", 30*time.Second)
	if !strings.Contains(screen, "zwarm-exit=0") {
		t.Fatalf("leaving the CLI:\n%s", screen)
	}
	if s := w.show(id); s.Status() != record.StatusCompleted || len(s.Attached) != 1 || s.Attached[0].End == nil {
		t.Fatalf("after: %s (%s), spans %+v", s.Status(), s.Error, s.Attached)
	}
}

// An attacher killed while the person works leaves no session attached
// for ever: its CLI goes with it, and the next reader settles the session
// as it was, saying what happened; a follow-up then resumes it as usual.
func TestKilledAttacherLeavesNoStuckStatus(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "first"))[0]
	w.setScript(fakeagent.Completes("after the attach", 20), fakeThread, []fakeagent.Step{fakeagent.Out("the person's CLI"), {"wait_file": filepath.Join(t.TempDir(), "never")}})
	tm := startTmux(t, w, nil, 120, 30, bins.zwarm, "attach", id)
	tm.waitFor("the CLI", "the person's CLI", 30*time.Second)
	attacher := childWith(tm.shellPID(), "attach")
	if attacher == 0 {
		t.Fatal("no zwarm attach under the terminal's shell")
	}
	cli := childWith(attacher, "resume")
	if cli == 0 {
		t.Fatal("no CLI under zwarm attach")
	}
	if s := w.show(id); s.Status() != record.StatusAttached {
		t.Fatalf("while attached: %s", s.Status())
	}
	if r := w.zwarm("wait", "--timeout", "200ms", id); r.code != 124 || !strings.Contains(r.stderr, "still running: "+id[:8]+" (attached)") {
		t.Errorf("wait on an attached session: %+v", r)
	}
	// rm says who holds it, not "kill it first", which kill refuses.
	for _, args := range [][]string{{"rm", id}, {"rm", "--force", "--yes", id}} {
		if r := w.zwarm(args...); r.code == 0 || !strings.Contains(r.stderr, "a person is attached to it (zwarm attach, pid") || strings.Contains(r.stderr, "kill it first") {
			t.Errorf("%s while attached: %+v", strings.Join(args, " "), r)
		}
	}
	syscall.Kill(attacher, syscall.SIGKILL)
	sessionstest.Eventually(t, "the CLI to go with its zwarm", func() bool { return !sessionstest.Alive(cli) && !sessionstest.Alive(attacher) })
	// A reader settles it once it sees the attacher gone; on a busy
	// machine the first may still find its exit under way.
	var s *session
	sessionstest.Eventually(t, "a reader to settle the session", func() bool { s = w.show(id); return s.Status() != record.StatusAttached })
	if s.Status() != record.StatusCompleted || !s.Settled() || len(s.Attached) != 1 || s.Attached[0].End == nil ||
		!strings.Contains(s.Attached[0].Note, "died without settling the session") {
		t.Fatalf("after the attacher died: want completed and settled, its span ended with a note that it died; got %s (settled %v), %d spans, the last ended %v with note %q",
			s.Status(), s.Settled(), len(s.Attached), len(s.Attached) > 0 && s.Attached[len(s.Attached)-1].End != nil, lastNote(s.Attached))
	}
	if out := w.ok("inject", "--wait", id, "go on"); !strings.Contains(out, "turn 2 completed") {
		t.Fatalf("inject after: %q", out)
	}
}

// lastNote is the note of the last attach span, for a failure message.
func lastNote(spans []record.AttachSpan) string {
	if len(spans) == 0 {
		return ""
	}
	return spans[len(spans)-1].Note
}

// A SIGTERM to zwarm attach stops the CLI and ends the attach properly,
// exit 130 as for any command a signal ends; and a CLI that dies with
// the terminal in raw mode (codex stopped by a signal does) leaves the
// person's shell as it was: echo and Ctrl+C work after it.
func TestAttachStoppedBySignalRestoresTheTerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "first"))[0]
	w.setScript(fakeagent.Completes("after", 20), fakeThread, []fakeagent.Step{
		{"run": "stty raw -echo -isig < /dev/tty"}, fakeagent.Out("the person's CLI, raw"),
		{"wait_file": filepath.Join(t.TempDir(), "never")}})
	tm := startTmux(t, w, nil, 120, 30, bins.zwarm, "attach", id)
	tm.waitFor("the CLI", "the person's CLI, raw", 30*time.Second)
	attacher := childWith(tm.shellPID(), "attach")
	if attacher == 0 {
		t.Fatal("no zwarm attach under the terminal's shell")
	}
	syscall.Kill(attacher, syscall.SIGTERM)
	screen := tm.waitFor("attach to exit", "zwarm-exit=", 30*time.Second)
	if !strings.Contains(screen, "zwarm-exit=130") || strings.Contains(screen, "failed to start") {
		t.Fatalf("attach stopped by SIGTERM:\n%s", screen)
	}
	tty := strings.TrimSpace(tm.run("display-message", "-p", "-t", "z", "#{pane_tty}"))
	out, err := exec.Command("stty", "-a", "-F", tty).CombinedOutput()
	if err != nil {
		t.Fatalf("stty -F %s: %v\n%s", tty, err, out)
	}
	for _, flag := range strings.Fields(string(out)) {
		if flag == "-echo" || flag == "-icanon" || flag == "-isig" {
			t.Fatalf("the terminal is left with %s:\n%s", flag, out)
		}
	}
	if s := w.show(id); s.Status() != record.StatusCompleted || len(s.Attached) != 1 || !strings.Contains(s.Attached[0].Note, "zwarm attach was stopped") {
		t.Fatalf("after: %s, spans %+v", s.Status(), s.Attached)
	}
}

// What the person starts in the CLI and leaves running (a server in the
// background, out of its session) ends with the attached span, as a
// turn's does: no worker's process outlives its session's work, whoever
// started it.
func TestWhatAnAttachedCLIStartedEndsWithIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "first"))[0]
	pidFile := filepath.Join(t.TempDir(), "daemon.pid")
	w.setScript(fakeagent.Completes("done", 20), fakeThread, []fakeagent.Step{
		fakeagent.Run("setsid nohup sleep 600 >/dev/null 2>&1 & echo $! > " + pidFile),
		fakeagent.Out("the person's CLI started a server"),
	})
	tm := startTmux(t, w, nil, 120, 30, bins.zwarm, "attach", id)
	screen := tm.waitFor("attach to exit", "zwarm-exit=", 30*time.Second)
	if !strings.Contains(screen, "zwarm-exit=0") {
		t.Fatalf("attach:\n%s", screen)
	}
	b, err := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid == 0 {
		t.Fatalf("the CLI started no server: %q %v", b, err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if sessionstest.Alive(pid) {
		t.Errorf("the server the attached CLI started (pid %d) runs on after the person left", pid)
	}
}

// A CLI killed by a signal is said to be killed, not to have failed to
// start, however soon it died.
func TestAnAttachedCLIKilledIsSaidToBeKilled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "first"))[0]
	w.setScript(fakeagent.Completes("done", 20), fakeThread, []fakeagent.Step{
		fakeagent.Out("the person's CLI"), fakeagent.Run("kill -9 $PPID"), {"wait_file": filepath.Join(t.TempDir(), "never")},
	})
	tm := startTmux(t, w, nil, 160, 30, bins.zwarm, "attach", id)
	screen := tm.waitFor("attach to exit", "zwarm-exit=", 30*time.Second)
	if !strings.Contains(screen, "its CLI was killed by SIGKILL") || strings.Contains(screen, "failed to start") {
		t.Fatalf("a CLI killed by SIGKILL:\n%s", screen)
	}
	if s := w.show(id); s.Status() != record.StatusCompleted || lastNote(s.Attached) != "its CLI was killed by SIGKILL" {
		t.Fatalf("after: %s, note %q", s.Status(), lastNote(s.Attached))
	}
}

// attach --interrupt of a worker whose turn has not started (its worktree
// being made, or its job in a cluster's queue) waits for the turn to run
// and interrupts it then, as inject --interrupt's message waits: it is not
// refused, for the person to try again.
func TestAttachInterruptWaitsForATurnThatHasNotStarted(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	gate := filepath.Join(t.TempDir(), "gate")
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), "[worktrees]\nsetup = \"while [ ! -e "+gate+" ]; do sleep 0.05; done\"\n")
	w.setScript([]fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), fakeagent.Out(`{"type":"turn.started"}`),
		{"wait_file": filepath.Join(t.TempDir(), "never")},
	}, fakeThread, []fakeagent.Step{fakeagent.Out("the person's CLI, in the thread")})
	id := w.spawn("block")
	if s := w.show(id); s.Status() != record.StatusPending {
		t.Fatalf("before its setup ends: %s", s.Status())
	}
	tm := startTmux(t, w, nil, 160, 30, bins.zwarm, "attach", "--interrupt", id)
	tm.waitFor("the notice", "has not started its turn yet", 30*time.Second)
	touch(t, gate)
	screen := tm.waitFor("attach to exit", "zwarm-exit=", 60*time.Second)
	if !strings.Contains(screen, "the person's CLI, in the thread") || !strings.Contains(screen, "zwarm-exit=0") {
		t.Fatalf("attach --interrupt of a worker not started:\n%s", screen)
	}
	if s := w.show(id); s.Turns[0].Status() != record.StatusInterrupted || len(s.Attached) != 1 {
		t.Fatalf("after: turns %+v, spans %d", s.Turns, len(s.Attached))
	}
}

// Given up (Ctrl+C) while the turn it interrupts is stopping, attach says
// what became of the session, not "interrupted" alone: the turn is stopped
// all the same, and nothing took over its thread.
func TestAttachGivenUpWhileTheTurnStopsSaysSo(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), "kill_grace = \"5s\"\n")
	w.setScript(fakeagent.Completes("done", 10), "block", []fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), fakeagent.Out(`{"type":"turn.started"}`),
		{"ignore_sigterm": true}, {"wait_file": filepath.Join(t.TempDir(), "never")},
	})
	id := w.spawn("block")
	sessionstest.Eventually(t, "the turn to run", func() bool { s := w.show(id); return s.Status() == record.StatusRunning && s.ThreadID != "" })
	tm := startTmux(t, w, nil, 200, 30, bins.zwarm, "attach", "--interrupt", id)
	tm.waitFor("the interrupt", "interrupting turn 1", 30*time.Second)
	// Ctrl+C as the terminal sends it to zwarm (the shell that waits for
	// it here would take the key too, and end the test's terminal).
	attacher := childWith(tm.shellPID(), "attach")
	if attacher == 0 {
		t.Fatal("no zwarm attach under the terminal's shell")
	}
	syscall.Kill(attacher, syscall.SIGINT)
	screen := tm.waitFor("attach to exit", "zwarm-exit=", 30*time.Second)
	if !strings.Contains(screen, "zwarm-exit=130") || !strings.Contains(screen, "given up while turn 1 stopped") {
		t.Fatalf("attach given up:\n%s", screen)
	}
}

// A person who starts a new conversation in the CLI (codex's /new,
// claude's /clear) leaves the session in it: later follow-ups continue
// what they did, and what it used is counted in the span, as the agent's
// own logs say. Here the CLI writes the rollout codex would.
func TestANewConversationInTheCLIIsTheOneTheSessionContinues(t *testing.T) {
	t.Parallel()
	w := repoWorld(t, map[string]string{"a": "a\n"})
	home := t.TempDir()
	const newThread = "0199a213-81c0-7800-8aa1-bbab2a0aaaaa"
	w.setScript(fakeagent.Completes("done", 10), fakeThread, []fakeagent.Step{
		fakeagent.Run(`d="$CODEX_HOME/sessions/$(date +%Y/%m/%d)"; mkdir -p "$d"; f="$d/rollout-now-` + newThread + `.jsonl"
printf '{"type":"session_meta","payload":{"id":"%s","cwd":"%s"}}\n' ` + newThread + ` "$(pwd)" > "$f"
printf '{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":500,"cached_input_tokens":0,"output_tokens":20,"reasoning_output_tokens":0}}}}\n' >> "$f"`),
		fakeagent.Out("the person's CLI, in a new conversation"),
	})
	id := strings.Fields(w.ok("spawn", "--wait", "first"))[0]
	before := w.show(id)
	tm := startTmux(t, w, []string{"CODEX_HOME=" + home}, 200, 30, bins.zwarm, "attach", id)
	screen := tm.waitFor("attach to exit", "zwarm-exit=", 30*time.Second)
	if !strings.Contains(screen, "zwarm-exit=0") || !strings.Contains(screen, "you started a new conversation (thread "+newThread+")") {
		t.Fatalf("attach:\n%s", screen)
	}
	s := w.show(id)
	if s.ThreadID != newThread || len(s.Attached) != 1 || s.Attached[0].Thread != newThread {
		t.Fatalf("after: thread %q (was %q), spans %+v", s.ThreadID, before.ThreadID, s.Attached)
	}
	if u := s.Attached[0].Usage; u == nil || u.TotalTokens != 520 || s.Usage.TotalTokens != before.Usage.TotalTokens+520 {
		t.Errorf("the new conversation's usage: span %+v, session %d (was %d)", u, s.Usage.TotalTokens, before.Usage.TotalTokens)
	}
}

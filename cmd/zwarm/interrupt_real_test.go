package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// A busy worker (the real CLI running a command for its model) is
// interrupted: its turn stops and is recorded interrupted, what it ran is
// gone, and the interrupting message runs at once as the next turn of
// the same thread, with the first turn's history.
func TestRealAgentInterruptedWhileBusy(t *testing.T) {
	forEachAgent(t, func(t *testing.T, a realAgent) {
		w, srv := realWorld(t, a.name)
		srv.On("the long way", fakemodel.Reply{Tool: a.tool, Args: a.args("sleep 1000")})
		// The follow-up's answer waits until the test has counted the
		// session's supervisors while the follow-up runs.
		hold := make(chan struct{})
		srv.On("take the short way", fakemodel.Reply{Text: "took the short way", Stall: hold})
		id := w.spawn("the long way")
		awaitSleep1000(t, id)
		thread := w.show(id).ThreadID
		before := proc.SupervisorsOf(id)
		out := w.ok("inject", "--interrupt", id, "take the short way")
		if !strings.Contains(out, "interrupting turn 1") {
			t.Fatalf("inject --interrupt: %q", out)
		}
		// One session, one supervisor: the one that ran turn 1 runs the
		// follow-up; the interrupt starts no other.
		sessionstest.Eventually(t, "the follow-up to run", func() bool {
			s := w.show(id)
			return len(s.Turns) == 2 && s.TurnRunning()
		})
		if now := proc.SupervisorsOf(id); len(before) != 1 || fmt.Sprint(now) != fmt.Sprint(before) {
			t.Errorf("supervisors: %v before the interrupt, %v while the follow-up runs; want the same one", before, now)
		}
		close(hold)
		w.ok("wait", "--timeout", "120s", id)
		s := w.show(id)
		if s.Status() != record.StatusCompleted || len(s.Turns) != 2 {
			t.Fatalf("status %s (%s), turns %+v", s.Status(), s.Error, s.Turns)
		}
		first, second := s.Turns[0], s.Turns[1]
		if first.Status() != record.StatusInterrupted || first.Error != "" || second.Status() != record.StatusCompleted ||
			!second.Resumed || second.LastMessage != "took the short way" || s.ThreadID != thread || thread == "" {
			t.Fatalf("thread %q then %q; turns %+v", thread, s.ThreadID, s.Turns)
		}
		for _, pid := range sessionstest.MarkedProcs(id) {
			t.Errorf("still running after the interrupt: %d", pid)
		}
		// The follow-up went to the same conversation: its request carries
		// the first turn's task (codex also keeps the command it was
		// running; claude, stopped mid-command, keeps the task only).
		reqs := srv.Requests()
		last := string(reqs[len(reqs)-1].Body)
		kept := []string{"the long way", "take the short way"}
		if a.name == "codex" {
			kept = append(kept, "sleep 1000")
		}
		for _, k := range kept {
			if !strings.Contains(last, k) {
				t.Fatalf("the follow-up's request lacks %q of the interrupted turn (%d bytes)", k, len(last))
			}
		}
		shown := w.ok("show", id)
		if !strings.Contains(shown, "interrupted") {
			t.Fatalf("show says nothing of the interruption:\n%s", shown)
		}
	})
}

// A worker killed while it runs a command does nothing more: no call to
// its model after the kill, no command run. Claude Code took SIGTERM as
// the end of its command, told its model, and ran the next command the
// model asked for before it exited.
func TestRealAgentKilledMidCommandDoesNothingMore(t *testing.T) {
	forEachAgent(t, func(t *testing.T, a realAgent) {
		// In a worktree, as a user's worker runs (claude runs a process
		// a turn there, not one fed each follow-up live).
		w, srv := realRepoWorld(t, a.name)
		w.gitEnv()
		writeFile(t, filepath.Join(w.State, "config.toml"), "default_adapter = \""+a.name+"\"\nkill_grace = \"2s\"\n") // a worktree's default sandbox
		after := filepath.Join(t.TempDir(), "after-the-kill")
		srv.On("the long way", fakemodel.Reply{Tool: a.tool, Args: a.args("sleep 1000; echo slept")},
			fakemodel.Reply{Tool: a.tool, Args: a.args("touch " + after)}, fakemodel.Reply{Text: "done after the kill"})
		id := w.spawn("the long way")
		awaitSleep1000(t, id)
		// Claude Code runs on once a command has run some seconds; a
		// command just started it stopped with.
		time.Sleep(6 * time.Second)
		asked := len(srv.Requests())
		w.ok("kill", id)
		if s := w.show(id); s.Status() != record.StatusKilled {
			t.Fatalf("after kill: %s", s.Status())
		}
		time.Sleep(time.Second) // what the agent would do next, it would do now
		if n := len(srv.Requests()); n != asked {
			t.Errorf("the model was called %d more times after the kill", n-asked)
		}
		if _, err := os.Stat(after); err == nil {
			t.Errorf("the agent ran its model's next command after the kill")
		}
	})
}

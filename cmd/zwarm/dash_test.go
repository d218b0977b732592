package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/tui"
)

// TestDashboardWholeProgram runs the dashboard as a program on a real state
// dir with a real supervised worker: a step appended to the turn file on
// disk appears on screen; a follow-up and a kill go through the keys.
func TestDashboardWholeProgram(t *testing.T) {
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(append([]fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		fakeagent.Out(`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"make build","status":"in_progress"}}`),
		{"wait_file": gate},
	}, fakeagent.Completes("built", 10)...))
	id := w.spawn("build it")

	st, err := state.NewStore(w.State)
	if err != nil {
		t.Fatal(err)
	}
	mgr := sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin(), SupervisorArgv: []string{bins.zwarm, supervisorCmd}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tm := teatest.NewTestModel(t, tui.New(ctx, tui.Options{Sessions: mgr, StateDir: w.State}),
		teatest.WithInitialTermSize(120, 40))
	waitFor := func(what string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
			teatest.WithDuration(15*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	}
	waitFor("make build  (running)")

	turn := filepath.Join(w.State, "sessions", id, "turns", "turn_1.jsonl")
	f, err := os.OpenFile(turn, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"item.completed","item":{"id":"item_7","type":"agent_message","text":"appended on disk by the test"}}` + "\n")
	f.Close()
	waitFor("appended on disk by the test")

	tm.Type("i")
	waitFor("follow-up to " + id[:8])
	tm.Type("ship it too")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor("follow-up queued for " + id[:8])
	inbox, err := mgr.Inbox(id)
	if err != nil || len(inbox) != 1 || inbox[0].Text != "ship it too" || inbox[0].State != record.InboxQueued {
		t.Fatalf("inbox %+v %v", inbox, err)
	}

	tm.Type("x")
	waitFor("[y/N]")
	tm.Type("y")
	waitFor(id[:8] + " killed")
	s, err := mgr.Get(ctx, id)
	if err != nil || s.Status() != record.StatusKilled {
		t.Fatalf("after kill from the dashboard: %v %v", s.Status(), err)
	}
	if left := sessionstest.MarkedProcs(id); len(left) > 0 {
		t.Fatalf("alive after kill: %v", left)
	}
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	if fm, ok := tm.FinalModel(t).(tui.Model); ok {
		fm.Close()
	}
	if strings.Contains(w.ok("show", id), "ship it too") == false {
		t.Fatal("show does not mention the follow-up")
	}
}

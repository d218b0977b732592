package sessions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/store"
	"github.com/zwarm/zwarm/sessions/supervisor"
	"github.com/zwarm/zwarm/sessions/watch"
)

// These tests run the supervisor inside the test process (under the race
// detector with -race), driving it with the fake agent: what `zwarm
// __supervise` does, minus the process around it.

// inProcess records a session and runs its supervisor on a goroutine of
// this process. done receives the supervisor's result.
func (w *world) inProcess(ctx context.Context, task string) (id string, done <-chan error) {
	w.T.Helper()
	self, err := proc.RefOf(os.Getpid())
	if err != nil {
		w.T.Fatal(err)
	}
	s := new(statusfield.With(record.Session{ID: store.NewID(), Task: task, Adapter: "fake", Model: "gpt-5.1-codex",
		WorkingDir: w.Work, Source: record.UserSource, CreatedAt: time.Now().UTC(), Turns: []record.Turn{}}, record.StatusPending))
	spawner := *self
	spawner.Role = record.RoleSpawn
	s.Owner = &spawner
	if err := w.Store.Create(s); err != nil {
		w.T.Fatal(err)
	}
	ch := make(chan error, 1)
	go func() { ch <- w.runSupervisor(ctx, s.ID) }()
	return s.ID, ch
}

// runSupervisor runs the supervisor of session id in this process,
// logging to its supervisor.log.
func (w *world) runSupervisor(ctx context.Context, id string) error {
	logf, err := os.OpenFile(w.Store.LogPath(id), os.O_WRONLY|os.O_CREATE|os.O_APPEND, store.FilePerm)
	if err != nil {
		w.T.Fatal(err)
	}
	w.T.Cleanup(func() { logf.Close() })
	return supervisor.Run(ctx, supervisor.Options{Store: w.Store, Adapters: testAdapters{}}, id, slogTo(logf))
}

func await(t testing.TB, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("supervisor: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the supervisor had not finished after two minutes; want it to run its session to the end")
	}
}

func TestSupervisorRunsATurnInProcess(t *testing.T) {
	w := newWorld(t)
	id, done := w.inProcess(context.Background(), "add a flag")
	await(t, done)
	s := w.wait(id)
	if s.Status() != record.StatusCompleted || !s.Settled() || s.Usage.InputTokens != 700 || s.LastMessage != "done" || s.ThreadID == "" {
		t.Fatalf("%s settled=%v usage %+v message %q thread %q", s.Status(), s.Settled(), s.Usage, s.LastMessage, s.ThreadID)
	}
	if p := w.Prompts(); len(p) != 1 || p[0] != "add a flag" {
		t.Fatalf("the agent was given %q", p)
	}
	if _, err := os.Stat(w.Store.ReservePath(id)); !os.IsNotExist(err) {
		t.Fatalf("a settled session keeps its disk reserve: %v", err)
	}
}

// A follow-up queued while a turn runs becomes the next turn, and nobody
// sees the session settled in between: not a subscriber, not Wait.
func TestQueuedFollowUpNeverShowsTheSessionSettled(t *testing.T) {
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "gate")
	w.SetScript(fakeagent.Script{Default: fakeagent.Completes("second", 900),
		ByPrompt: map[string][]map[string]any{"first": append([]map[string]any{{"wait_file": gate}}, fakeagent.Completes("first", 700)...)}})
	ctx := context.Background()
	id, done := w.inProcess(ctx, "first")
	sub, err := w.Manager.Subscribe(ctx, watch.SubscribeOptions{IDs: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	sessionstest.Eventually(t, "turn 1 to run", func() bool { s, _ := w.Manager.Get(ctx, id); return s.TurnRunning() })
	res, err := w.Manager.Inject(ctx, id, "again")
	if err != nil || res.Outcome != sessions.InjectQueued || res.Turn != 1 {
		t.Fatalf("inject: %+v %v", res, err)
	}
	waited := make(chan []*record.Session, 1)
	go func() {
		list, _ := w.Manager.Wait(ctx, []string{id}, sessions.WaitOptions{})
		waited <- list
	}()
	os.WriteFile(gate, nil, 0o600)
	await(t, done)
	var ended []int
	for u := range sub.C() {
		for _, tr := range u.Ended {
			ended = append(ended, tr.N)
		}
		if u.Session.Settled() {
			if len(u.Session.Turns) != 2 {
				t.Fatalf("settled with %d turns: a subscriber saw it done before the follow-up ran", len(u.Session.Turns))
			}
			break
		}
	}
	if len(ended) != 2 || ended[0] != 1 || ended[1] != 2 {
		t.Fatalf("turn ends reported %v, want [1 2]", ended)
	}
	list := <-waited
	s := list[0]
	if len(s.Turns) != 2 || s.Status() != record.StatusCompleted || !s.Turns[1].Resumed || s.Usage.InputTokens != 900 {
		t.Fatalf("Wait returned %d turns, %s, resumed %v, usage %+v", len(s.Turns), s.Status(), s.Turns[1].Resumed, s.Usage)
	}
	if p := w.Prompts(); len(p) != 2 || p[1] != "again" {
		t.Fatalf("prompts %q", p)
	}
}

// A live agent takes queued follow-ups on its stdin as its next turns, in
// one process, in order.
func TestLiveAgentTakesFollowUpsAsTurns(t *testing.T) {
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "gate")
	w.SetScript(fakeagent.Script{Live: true, Default: fakeagent.Completes("more", 0),
		ByPrompt: map[string][]map[string]any{"first": append([]map[string]any{{"wait_file": gate}}, fakeagent.Completes("first", 0)...)}})
	ctx := context.Background()
	id, done := w.inProcess(ctx, "first")
	sessionstest.Eventually(t, "the live agent", func() bool { s, _ := w.Manager.Get(ctx, id); return s.AgentLive })
	for _, msg := range []string{"two", "three"} {
		res, err := w.Manager.Inject(ctx, id, msg)
		if err != nil || res.Outcome != sessions.InjectQueued || !res.Live {
			t.Fatalf("inject %q: %+v %v", msg, res, err)
		}
	}
	os.WriteFile(gate, nil, 0o600)
	await(t, done)
	s := w.wait(id)
	if len(s.Turns) != 3 || !s.Turns[1].Live || !s.Turns[2].Live || s.Status() != record.StatusCompleted {
		t.Fatalf("turns %+v status %s", s.Turns, s.Status())
	}
	if p := w.Prompts(); strings.Join(p, ",") != "first,two,three" {
		t.Fatalf("prompts %q", p)
	}
	for n := 1; n <= 3; n++ {
		data, _ := os.ReadFile(w.Store.TurnPath(id, n))
		if strings.Count(string(data), "turn.completed") != 1 {
			t.Fatalf("turn file %d is not cut at its turn's end:\n%s", n, data)
		}
	}
}

// An agent that prints megabytes before it reads its stdin cannot wedge
// the supervisor, however long the prompt.
func TestAgentPrintingBeforeReadingDoesNotWedge(t *testing.T) {
	for _, live := range []bool{false, true} {
		name := map[bool]string{false: "prompt on stdin", true: "live"}[live]
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.SetScript(fakeagent.Script{Live: live, Before: []map[string]any{{"out_bytes": 2 << 20}}, Default: fakeagent.Completes("read it", 100)})
			prompt := strings.Repeat("p", 100<<10)
			id, done := w.inProcess(context.Background(), prompt)
			await(t, done)
			s := w.wait(id)
			if s.Status() != record.StatusCompleted || s.LastMessage != "read it" {
				t.Fatalf("%s %q: %s", s.Status(), s.LastMessage, s.Error)
			}
			if p := w.Prompts(); len(p) != 1 || len(p[0]) != len(prompt) {
				t.Fatalf("the agent got a prompt of %d bytes", len(p[0]))
			}
		})
	}
}

// Stopping an agent that never reads its input is prompt too: the supervisor
// hears the stop while the agent blocks.
func TestStopWhileTheAgentIgnoresItsInput(t *testing.T) {
	w := newWorld(t)
	never := filepath.Join(t.TempDir(), "never")
	w.SetScript(fakeagent.Script{Live: true, Before: []map[string]any{{"out_bytes": 2 << 20}, {"wait_file": never}}, Default: fakeagent.Completes("x", 1)})
	ctx, cancel := context.WithCancel(context.Background())
	id, done := w.inProcess(ctx, strings.Repeat("p", 100<<10))
	sessionstest.Eventually(t, "the agent's output", func() bool {
		fi, err := os.Stat(w.Store.TurnPath(id, 1))
		return err == nil && fi.Size() >= 2<<20
	})
	cancel()
	await(t, done)
	s := w.wait(id)
	if s.Status() != record.StatusKilled || s.Turns[0].Status() != record.StatusKilled {
		t.Fatalf("%s: %s", s.Status(), s.Error)
	}
	log, _ := os.ReadFile(w.Store.LogPath(id))
	if !strings.Contains(string(log), "stopping agent") {
		t.Fatalf("supervisor log:\n%s", log)
	}
}

// A stubborn agent that ignores SIGTERM is killed after the grace period.
func TestStubbornAgentIsKilledAfterTheGrace(t *testing.T) {
	w := newWorld(t)
	never := filepath.Join(t.TempDir(), "never")
	w.SetScript(fakeagent.Script{Default: []map[string]any{{"ignore_sigterm": true}, fakeagent.Out(`{"type":"thread.started","thread_id":"t"}`), {"wait_file": never}}})
	ctx, cancel := context.WithCancel(context.Background())
	id, done := w.inProcess(ctx, "hold on")
	sessionstest.Eventually(t, "a thread", func() bool { s, _ := w.Manager.Get(ctx, id); return s.ThreadID != "" })
	cancel()
	await(t, done)
	s := w.wait(id)
	if s.Status() != record.StatusKilled || s.ExitCode == nil || *s.ExitCode != 137 {
		t.Fatalf("%s exit %v", s.Status(), s.ExitCode)
	}
}

// A kill recorded before the supervisor starts a turn means no turn starts.
func TestStopBeforeTheFirstTurnStartsNothing(t *testing.T) {
	w := newWorld(t)
	self, _ := proc.RefOf(os.Getpid())
	s := new(statusfield.With(record.Session{ID: store.NewID(), Task: "never", Adapter: "fake", WorkingDir: w.Work,
		CreatedAt: time.Now().UTC(), Turns: []record.Turn{}, Owner: self,
		Stop: &record.StopRequest{At: time.Now().UTC(), Reason: "killed by zwarm kill"}}, record.StatusPending))
	if err := w.Store.Create(s); err != nil {
		t.Fatal(err)
	}
	if err := w.runSupervisor(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	got := w.wait(s.ID)
	if got.Status() != record.StatusKilled || len(got.Turns) != 0 || len(w.Prompts()) != 0 {
		t.Fatalf("%s, %d turns, prompts %q", got.Status(), len(got.Turns), w.Prompts())
	}
}

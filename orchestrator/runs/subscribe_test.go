package runs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/model"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
)

// stepper is an orchestrating model that answers when the test says so:
// each reply is a list of tool calls.
type stepper struct{ replies chan []string }

func (s *stepper) Respond(ctx context.Context, _ *model.Request) (*model.Response, error) {
	select {
	case calls := <-s.replies:
		resp := &model.Response{ID: "resp", Usage: record.Usage{InputTokens: 1000, OutputTokens: 50, TotalTokens: 1050}}
		for i, c := range calls {
			name, args, _ := strings.Cut(c, " ")
			if args == "" {
				args = "{}"
			}
			b, _ := json.Marshal(map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", i), "call_id": fmt.Sprintf("call_%s_%d", name, time.Now().UnixNano()),
				"name": name, "arguments": args, "status": "completed"})
			resp.Output = append(resp.Output, b)
		}
		return resp, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// startRun starts a real run in stateDir, driven by the returned stepper;
// done delivers its record when it ends.
func startRun(t *testing.T, stateDir, task string) (id string, step *stepper, done <-chan *runs.Record) {
	t.Helper()
	st, err := state.NewStore(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin()})
	step = &stepper{replies: make(chan []string)}
	ctx, cancel := context.WithCancel(context.Background())
	run, err := orchestrator.Start(ctx, orchestrator.Options{Sessions: m, StateDir: stateDir, Client: step,
		Settings: orchestrator.Settings{Model: "gpt-5.1", Dir: t.TempDir(), Limits: runs.Limits{MaxSteps: 5}}}, task)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	out := make(chan *runs.Record, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		rec, _ := run.Execute(ctx)
		out <- rec
	}()
	t.Cleanup(func() { cancel(); <-finished })
	return run.ID(), step, out
}

func subscribe(t *testing.T, stateDir string, opt runs.SubscribeOptions) *runs.Subscription {
	t.Helper()
	sub, err := runs.Subscribe(context.Background(), stateDir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Close)
	return sub
}

// await reads updates until one satisfies cond, or fails the test after a
// minute.
func await(t *testing.T, sub *runs.Subscription, what string, cond func(runs.Update) bool) runs.Update {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case u, ok := <-sub.C():
			if !ok {
				t.Fatalf("the subscription ended (%v) before %s", sub.Err(), what)
			}
			if cond(u) {
				return u
			}
		case <-deadline:
			t.Fatalf("no update within a minute for %s", what)
		}
	}
}

// quiet fails the test if an update arrives within d.
func quiet(t *testing.T, sub *runs.Subscription, d time.Duration) {
	t.Helper()
	select {
	case u := <-sub.C():
		t.Fatalf("unexpected update %+v", u)
	case <-time.After(d):
	}
}

// A state dir that does not exist yet: the first load says so at once,
// nothing is created, and a run started later is seen.
func TestRunsAppearInAStateDirMadeLater(t *testing.T) {
	state := filepath.Join(t.TempDir(), "later", ".zwarm")
	sub := subscribe(t, state, runs.SubscribeOptions{})
	if u := <-sub.C(); !u.Synced || u.ID != "" {
		t.Fatalf("first update %+v", u)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Fatalf("the subscription made the state dir: %v", err)
	}
	id, step, done := startRun(t, state, "the task")
	u := await(t, sub, "the new run", func(u runs.Update) bool { return u.ID == id && u.Record != nil })
	if u.Record.Status != runs.StatusRunning || u.Record.Task != "the task" || len(u.Events) != 0 {
		t.Fatalf("update %+v", u)
	}
	step.replies <- []string{`finish {"summary":"done"}`}
	<-done
	await(t, sub, "the run completed", func(u runs.Update) bool {
		return u.ID == id && u.Record != nil && u.Record.Status == runs.StatusCompleted
	})
}

// Following one run: its events arrive as they are written, in order, each
// once, and its record as it changes.
func TestOneRunsEventsArriveLive(t *testing.T) {
	state := t.TempDir()
	id, step, done := startRun(t, state, "follow me")
	sub := subscribe(t, state, runs.SubscribeOptions{Run: id})
	var types []runs.EventType
	first := await(t, sub, "the first load", func(u runs.Update) bool { return true })
	if !first.Synced || first.Record == nil || first.ID != id {
		t.Fatalf("first %+v", first)
	}
	// until reads updates, collecting events, until the last one is typ.
	until := func(typ runs.EventType, u runs.Update) {
		t.Helper()
		for {
			for _, ev := range u.Events {
				types = append(types, ev.Type)
			}
			if len(types) > 0 && types[len(types)-1] == typ {
				return
			}
			u = await(t, sub, string(typ), func(runs.Update) bool { return true })
		}
	}
	until(runs.EventModelCall, first)
	step.replies <- []string{"list_sessions"}
	until(runs.EventModelCall, runs.Update{})
	step.replies <- []string{`finish {"summary":"all done"}`}
	<-done
	until(runs.EventStopped, runs.Update{})
	want := "[run_started model_call model_response usage tool_call tool_result model_call model_response usage tool_call tool_result run_stopped]"
	if got := fmt.Sprint(types); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	evs, _ := runs.ReadEvents(state, id)
	if len(evs) != len(types) {
		t.Fatalf("%d events on disk, %d delivered", len(evs), len(types))
	}
}

// writeRecord writes a run.json as an orchestrate process leaves it.
func writeRecord(t *testing.T, state string, rec runs.Record) {
	t.Helper()
	dir := runs.RunDir(state, rec.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := runs.WriteRecord(dir, &rec); err != nil {
		t.Fatal(err)
	}
}

// A run whose process is SIGKILLed writes nothing more; the subscription
// hears the death through a pidfd and reads it interrupted.
func TestARunWhoseProcessDiesReadsInterrupted(t *testing.T) {
	state := t.TempDir()
	owner := exec.Command("sleep", "60")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer owner.Process.Kill()
	ref, err := proc.RefOf(owner.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	writeRecord(t, state, runs.Record{Version: 1, ID: id, Task: "t", Status: runs.StatusRunning, Owner: ref,
		Limits: runs.Limits{MaxSteps: 9}, CreatedAt: time.Now().UTC()})
	sub := subscribe(t, state, runs.SubscribeOptions{})
	if u := await(t, sub, "the first load", func(runs.Update) bool { return true }); u.Record == nil || u.Record.Status != runs.StatusRunning || !u.Synced {
		t.Fatalf("first %+v", u)
	}
	quiet(t, sub, 100*time.Millisecond)
	owner.Process.Kill()
	owner.Wait()
	u := await(t, sub, "the owner's death", func(u runs.Update) bool { return u.Record != nil })
	if u.Record.Status != runs.StatusInterrupted || !strings.Contains(u.Record.StopReason, "ended without saving an outcome") {
		t.Fatalf("after the kill %+v", u.Record)
	}
	// Removing the run's dir removes it.
	os.RemoveAll(runs.RunDir(state, id))
	if u := await(t, sub, "the removal", func(runs.Update) bool { return true }); !u.Removed || u.ID != id {
		t.Fatalf("removal %+v", u)
	}
}

// An update's record never runs ahead of its events: a record that says
// the run ended comes with every event written before it, however late
// the events file's own notification is (the owner's exit, heard through
// a pidfd, can wake the reader before it). zwarm runs answer depends on
// it: it reads "the run ended" as "it ended without reading the answer"
// only if the answer's event is not in the same update or an earlier one.
func TestARecordComesWithTheEventsWrittenBeforeIt(t *testing.T) {
	state := t.TempDir()
	id := uuid.NewString()
	writeRecord(t, state, runs.Record{Version: 1, ID: id, Task: "t", Status: runs.StatusWaiting, CreatedAt: time.Now().UTC()})
	// The events file is written through a hard link in another dir: the
	// run dir's watch hears nothing of it, as if its notification were
	// still on its way.
	aside := filepath.Join(t.TempDir(), runs.EventsFile)
	if err := os.WriteFile(aside, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(aside, filepath.Join(runs.RunDir(state, id), runs.EventsFile)); err != nil {
		t.Fatal(err)
	}
	sub := subscribe(t, state, runs.SubscribeOptions{Run: id})
	if u := await(t, sub, "the first load", func(runs.Update) bool { return true }); u.Record == nil || len(u.Events) != 0 {
		t.Fatalf("first load %+v", u)
	}
	f, err := os.OpenFile(aside, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(runs.Event{Type: runs.EventAnswer, Run: id, QuestionID: "q", Text: "8080"})
	if _, err := f.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	f.Close()
	writeRecord(t, state, runs.Record{Version: 1, ID: id, Task: "t", Status: runs.StatusCompleted, CreatedAt: time.Now().UTC()})
	u := await(t, sub, "the ended record", func(u runs.Update) bool { return u.Record != nil })
	if u.Record.Status != runs.StatusCompleted || len(u.Events) != 1 || u.Events[0].Type != runs.EventAnswer {
		t.Fatalf("the record came as %s with events %+v; want completed with the answer written before it", u.Record.Status, u.Events)
	}
}

// A line is delivered once whole: a torn line waits for its newline; at
// first only the newest Window bytes are read, from a line's start.
func TestEventsTornLinesAndWindow(t *testing.T) {
	state := t.TempDir()
	id := uuid.NewString()
	writeRecord(t, state, runs.Record{Version: 1, ID: id, Task: "t", Status: runs.StatusCompleted, CreatedAt: time.Now().UTC()})
	path := filepath.Join(runs.RunDir(state, id), runs.EventsFile)
	var body strings.Builder
	for i := 1; i <= 200; i++ {
		b, _ := json.Marshal(runs.Event{Type: runs.EventNotice, Run: id, Step: i, Text: strings.Repeat("x", 80)})
		body.Write(append(b, '\n'))
	}
	if err := os.WriteFile(path, []byte(body.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := subscribe(t, state, runs.SubscribeOptions{Run: id, Window: 4096})
	u := await(t, sub, "the first load", func(runs.Update) bool { return true })
	if u.Skipped == 0 || len(u.Events) == 0 || len(u.Events) > 40 || u.Events[len(u.Events)-1].Step != 200 || u.Events[0].Step < 150 {
		t.Fatalf("window: skipped %d, %d events, first step %d", u.Skipped, len(u.Events), u.Events[0].Step)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(`{"type":"notice","step":201,"text":"to`)
	quiet(t, sub, 150*time.Millisecond)
	f.WriteString(`rn"}` + "\n")
	u = await(t, sub, "the whole line", func(runs.Update) bool { return true })
	if len(u.Events) != 1 || u.Events[0].Step != 201 || u.Events[0].Text != "torn" {
		t.Fatalf("after the newline %+v", u)
	}
}

// An events file replaced behind the run's back, by one as long or
// longer, or removed and put back, is read again from its start with
// Reset: only one that shrank was, and a story read on was shown twice.
func TestAReplacedEventsFileStartsOver(t *testing.T) {
	state := t.TempDir()
	id := uuid.NewString()
	writeRecord(t, state, runs.Record{Version: 1, ID: id, Task: "t", Status: runs.StatusCompleted, CreatedAt: time.Now().UTC()})
	path := filepath.Join(runs.RunDir(state, id), runs.EventsFile)
	events := func(from, to int) []byte {
		var b bytes.Buffer
		for i := from; i <= to; i++ {
			line, _ := json.Marshal(runs.Event{Type: runs.EventNotice, Run: id, Step: i, Text: "n"})
			b.Write(append(line, '\n'))
		}
		return b.Bytes()
	}
	if err := os.WriteFile(path, events(1, 5), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := subscribe(t, state, runs.SubscribeOptions{Run: id})
	if u := await(t, sub, "the first load", func(u runs.Update) bool { return len(u.Events) > 0 }); len(u.Events) != 5 {
		t.Fatalf("first load: %d events", len(u.Events))
	}
	// Replaced by another file, longer: written aside and renamed over.
	aside := path + ".new"
	if err := os.WriteFile(aside, events(11, 16), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, path); err != nil {
		t.Fatal(err)
	}
	u := await(t, sub, "the replacement", func(u runs.Update) bool { return len(u.Events) > 0 || u.Reset })
	if !u.Reset || len(u.Events) != 6 || u.Events[0].Step != 11 {
		t.Fatalf("after a replacement: reset %v, %d events %+v", u.Reset, len(u.Events), u.Events)
	}
	// Removed, then put back as it was (its inode may be the old one's).
	saved, _ := os.ReadFile(path)
	os.Remove(path)
	quiet(t, sub, 300*time.Millisecond)
	if err := os.WriteFile(path, saved, 0o600); err != nil {
		t.Fatal(err)
	}
	u = await(t, sub, "the file put back", func(u runs.Update) bool { return len(u.Events) > 0 || u.Reset })
	if !u.Reset {
		t.Fatalf("after it was put back: no reset, %d events", len(u.Events))
	}
	// (Read as it was written, empty at first, maybe.)
	for n := len(u.Events); n < 6; n += len(u.Events) {
		u = await(t, sub, "the rest of the file put back", func(u runs.Update) bool { return len(u.Events) > 0 || u.Reset })
		if u.Reset || n+len(u.Events) > 6 {
			t.Fatalf("after it was put back: reset %v, %d events more than %d", u.Reset, len(u.Events), n)
		}
	}
}

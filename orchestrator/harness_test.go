package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
	"github.com/zwarm/zwarm/orchestrator/model"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// harness is a real run: real workers (the scripted fake agent under
// zwarm's supervisors), the real OpenAI client, a fake model server.
type harness struct {
	t   *testing.T
	w   *testenv.World
	srv *fakemodel.Server
	key string // the task: the fake server's script key

	mu     sync.Mutex
	events []runs.Event
}

func newHarness(t *testing.T, task string) *harness {
	t.Helper()
	srv, err := fakemodel.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return &harness{t: t, w: testenv.New(t, bins, ""), srv: srv, key: task}
}

func (h *harness) settings(mod func(*Settings)) Settings {
	s := Settings{Model: "gpt-5.1", Dir: h.w.Work, Limits: runs.Limits{MaxSteps: 20, MaxWorkers: 4}, StreamRetries: 2}
	if mod != nil {
		mod(&s)
	}
	return s
}

func (h *harness) options(set Settings, retries int) Options {
	return Options{Sessions: h.w.Manager, StateDir: h.w.State, Settings: set,
		Client:  model.NewOpenAI(model.OpenAIOptions{BaseURL: h.srv.URL + "/v1", APIKey: "sk-test", MaxRetries: retries, MaxRetryDelay: 5 * time.Second}),
		OnEvent: func(ev runs.Event) { h.mu.Lock(); h.events = append(h.events, ev); h.mu.Unlock() }}
}

// script queues the model's replies for this run's task.
func (h *harness) script(replies ...fakemodel.Reply) { h.srv.On(h.key, replies...) }

// execute starts a run of the task and runs it to its end, with a deadline.
func (h *harness) execute(set Settings, retries int) *runs.Record {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := Start(ctx, h.options(set, retries), h.key)
	if err != nil {
		h.t.Fatal(err)
	}
	rec, err := r.Execute(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	return rec
}

func (h *harness) eventsOf(typ runs.EventType) []runs.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []runs.Event
	for _, ev := range h.events {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// onDisk reads a run's files back.
func (h *harness) onDisk(id string) (*runs.Record, []json.RawMessage, []runs.Event) {
	h.t.Helper()
	rec, err := runs.LoadRecord(h.w.State, id)
	if err != nil {
		h.t.Fatal(err)
	}
	items, err := runs.ReadConversation(h.w.State, id)
	if err != nil {
		h.t.Fatal(err)
	}
	evs, err := runs.ReadEvents(h.w.State, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return rec, items, evs
}

// requests are the model calls made for this run's task.
func (h *harness) requests() []fakemodel.Request {
	var out []fakemodel.Request
	for _, r := range h.srv.Requests() {
		if r.Path == "/v1/responses" {
			out = append(out, r)
		}
	}
	return out
}

func call(name string, args any) fakemodel.Call {
	b, _ := json.Marshal(args)
	return fakemodel.Call{Name: name, Args: string(b)}
}

func calls(cs ...fakemodel.Call) fakemodel.Reply { return fakemodel.Reply{Calls: cs} }

// withDelegated builds a reply from the n-th worker id delegate returned
// in the conversation so far.
func withDelegated(n int, build func(id string) fakemodel.Reply) fakemodel.Reply {
	return fakemodel.Reply{Dynamic: func(body []byte) fakemodel.Reply {
		outs := fakemodel.Outputs(body, "delegate")
		if len(outs) <= n {
			return fakemodel.Reply{Text: fmt.Sprintf("test script: no delegate output %d in %d", n, len(outs))}
		}
		var d struct {
			SessionID string `json:"session_id"`
		}
		json.Unmarshal([]byte(outs[n]), &d)
		return build(d.SessionID)
	}}
}

func gate(t *testing.T) (string, func()) {
	p := filepath.Join(t.TempDir(), "gate")
	var once sync.Once
	open := func() { once.Do(func() { os.WriteFile(p, nil, 0o600) }) }
	t.Cleanup(open)
	return p, open
}

func outputsOf(items []json.RawMessage, tool string) []string {
	names := map[string]string{}
	var out []string
	for _, raw := range items {
		it := inspect(raw)
		if it.isCall() {
			names[it.CallID] = it.Name
		}
		if it.isOutput() && names[it.CallID] == tool {
			out = append(out, it.outputText())
		}
	}
	return out
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

func workerOf(t *testing.T, w *testenv.World, id string) *record.Session {
	t.Helper()
	s, err := w.Manager.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newBenchWorld is a world for a benchmark.
func newBenchWorld(b *testing.B) *testenv.World {
	return testenv.New(b, bins, "")
}

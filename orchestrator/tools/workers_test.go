package tools

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/watch"
)

// fixture is a registry of worker tools over a real state dir whose codex
// workers are the scripted fake agent.
type fixture struct {
	t       *testing.T
	w       *testenv.World
	reg     *Registry
	src     record.Source
	mu      sync.Mutex
	spawned []string
	news    []string
}

// newFixture's options, if any, change the tools' settings.
func newFixture(t *testing.T, maxWorkers int, options ...func(*WorkerOptions)) *fixture {
	t.Helper()
	f := &fixture{t: t, w: testenv.New(t, bins, ""), src: record.RunSource("run-test")}
	opt := WorkerOptions{Sessions: f.w.Manager, Source: f.src, Dir: f.w.Work, MaxWorkers: maxWorkers,
		OnSpawn: func(_ context.Context, s *record.Session) {
			f.mu.Lock()
			f.spawned = append(f.spawned, s.ID)
			f.mu.Unlock()
		},
		Progress: func(p Progress) { f.mu.Lock(); f.news = append(f.news, p.Text); f.mu.Unlock() },
	}
	for _, o := range options {
		o(&opt)
	}
	reg, err := NewRegistry(Workers(opt)...)
	if err != nil {
		t.Fatal(err)
	}
	f.reg = reg
	return f
}

// call runs a tool with a deadline and decodes a JSON result into out.
func (f *fixture) call(name string, args any, out any) Result {
	f.t.Helper()
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := f.reg.Call(ctx, name, b)
	if out != nil && !res.IsError {
		if err := json.Unmarshal([]byte(res.Text), out); err != nil {
			f.t.Fatalf("%s: %v in %s", name, err, res.Text)
		}
	}
	return res
}

func (f *fixture) mustOK(name string, args any, out any) Result {
	f.t.Helper()
	res := f.call(name, args, out)
	if res.IsError {
		f.t.Fatalf("%s(%v): %s", name, args, res.Text)
	}
	return res
}

func (f *fixture) delegate(task string) string {
	f.t.Helper()
	var d struct {
		SessionID string `json:"session_id"`
		Status    string `json:"status"`
	}
	f.mustOK("delegate", map[string]any{"task": task}, &d)
	if d.SessionID == "" {
		f.t.Fatal("delegate returned no id")
	}
	return d.SessionID
}

type waitResult struct {
	Finished []struct {
		SessionID   string `json:"session_id"`
		Status      string `json:"status"`
		LastMessage string `json:"last_message"`
		Error       string `json:"error"`
	} `json:"finished"`
	Running []struct {
		SessionID string `json:"session_id"`
	} `json:"running"`
	TimedOut bool   `json:"timed_out"`
	Note     string `json:"note"`
}

// subscribeHook is the session core with a hook called once each
// subscription is made: a test can act once a wait is under way.
type subscribeHook struct {
	Sessions
	subscribed func()
}

func (h subscribeHook) Subscribe(ctx context.Context, opt watch.SubscribeOptions) (*watch.Subscription, error) {
	sub, err := h.Sessions.Subscribe(ctx, opt)
	if err == nil {
		h.subscribed()
	}
	return sub, err
}

func TestDelegateWaitCheck(t *testing.T) {
	t.Parallel()
	// armed is set before the wait whose subscription must be told of;
	// subscribed is closed when that subscription is made.
	var armed atomic.Bool
	subscribed := make(chan struct{})
	f := newFixture(t, 0, func(o *WorkerOptions) {
		o.Sessions = subscribeHook{Sessions: o.Sessions, subscribed: func() {
			if armed.CompareAndSwap(true, false) {
				close(subscribed)
			}
		}}
	})
	gate := filepath.Join(t.TempDir(), "gate")
	f.w.Script(map[string][]fakeagent.Step{
		"write the parser": append([]fakeagent.Step{fakeagent.ChangesFile("parser.go")}, fakeagent.Completes("parser written, tests pass", 1200)...),
		"slow one":         append([]fakeagent.Step{fakeagent.WaitFile(gate)}, fakeagent.Completes("slow done", 50)...),
	})
	a := f.delegate("write the parser")
	b := f.delegate("slow one")
	s, err := f.w.Manager.Get(context.Background(), a)
	if err != nil || s.Source != f.src || s.WorkingDir != f.w.Work {
		t.Fatalf("worker %+v %v", s, err)
	}
	if len(f.spawned) != 2 {
		t.Errorf("OnSpawn saw %v", f.spawned)
	}

	// any: returns with the fast one while the slow one runs.
	var wr waitResult
	f.mustOK("wait", map[string]any{}, &wr)
	if len(wr.Finished) != 1 || wr.Finished[0].SessionID != a || wr.Finished[0].LastMessage != "parser written, tests pass" ||
		len(wr.Running) != 1 || wr.Running[0].SessionID != b || wr.TimedOut {
		t.Fatalf("wait any: %+v", wr)
	}
	// Already read: the default set is now the slow one alone.
	var list struct {
		Workers []struct {
			SessionID      string `json:"session_id"`
			NeedsAttention bool   `json:"needs_attention"`
		} `json:"workers"`
	}
	f.mustOK("list_sessions", map[string]any{}, &list)
	if len(list.Workers) != 2 || list.Workers[0].NeedsAttention || list.Workers[1].NeedsAttention {
		t.Errorf("list %+v", list)
	}

	var check struct {
		Status       string              `json:"status"`
		LastMessage  string              `json:"last_message"`
		FilesChanged []record.FileChange `json:"files_changed"`
		Usage        record.Usage        `json:"usage"`
		CostUSD      *float64            `json:"cost_usd"`
	}
	f.mustOK("check_session", map[string]any{"session_id": a[:8]}, &check)
	if check.Status != "completed" || len(check.FilesChanged) != 1 || check.FilesChanged[0].Path != "parser.go" ||
		check.Usage.InputTokens != 1200 || check.CostUSD == nil {
		t.Errorf("check %+v", check)
	}

	// The slow one is let go once the wait is under way: a worker that
	// settled before a wait began is in its result but makes no progress
	// line, which is what this part checks.
	armed.Store(true)
	released, stop := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(released)
		select {
		case <-subscribed:
		case <-stop: // the wait ended without following them; it says why
		case <-time.After(60 * time.Second):
			t.Errorf("the wait for both workers did not follow them within 60s; the slow one is let go anyway")
		}
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Errorf("cannot open the slow worker's gate: %v", err)
		}
	}()
	defer func() { close(stop); <-released }()
	f.mustOK("wait", map[string]any{"session_ids": []string{a, b}, "mode": "all"}, &wr)
	if len(wr.Finished) != 2 || len(wr.Running) != 0 || wr.Finished[1].LastMessage != "slow done" {
		t.Fatalf("wait all should have returned both workers finished, the second saying \"slow done\"; it returned %+v", wr)
	}
	f.mu.Lock()
	news := strings.Join(f.news, ";")
	f.mu.Unlock()
	if !strings.Contains(news, record.ShortID(b)+" completed") {
		t.Errorf("the wait's progress should tell that %s completed; it told %q", record.ShortID(b), news)
	}
	// Everything is read: nothing to wait for.
	f.mustOK("wait", map[string]any{}, &wr)
	if len(wr.Finished)+len(wr.Running) != 0 || !strings.Contains(wr.Note, "nothing to wait for") {
		t.Errorf("idle wait %+v", wr)
	}
	peek := f.mustOK("peek_session", map[string]any{"session_id": b}, nil)
	if !strings.Contains(peek.Text, "completed · turn 1") || !strings.Contains(peek.Text, "“slow done”") || strings.Contains(peek.Text, "\n") {
		t.Errorf("peek %q", peek.Text)
	}
	traj := f.mustOK("get_trajectory", map[string]any{"session_id": a}, nil)
	if !strings.Contains(traj.Text, "✎ add parser.go") || !strings.Contains(traj.Text, "» parser written") || !strings.Contains(traj.Text, "── turn 1 (task, completed)") {
		t.Errorf("trajectory %s", traj.Text)
	}
}

func TestWaitTimesOutAndRefusesStrangers(t *testing.T) {
	t.Parallel()
	// The minimum shortened from 10 s to 2 (TestWaitTimeoutIsClamped
	// checks the real one), so that the wait is over sooner.
	f := newFixture(t, 0, func(o *WorkerOptions) { o.MinWait = 2 * time.Second })
	gate := filepath.Join(t.TempDir(), "gate")
	f.w.Script(map[string][]fakeagent.Step{"forever": {fakeagent.WaitFile(gate)}})
	id := f.delegate("forever")
	began := time.Now()
	var wr waitResult
	f.mustOK("wait", map[string]any{"timeout_s": 1}, &wr)
	if !wr.TimedOut || len(wr.Running) != 1 || !strings.Contains(wr.Note, "raised to the minimum, 2") || time.Since(began) < 2*time.Second {
		t.Errorf("wait %+v after %v", wr, time.Since(began))
	}
	stranger, err := f.w.Manager.Spawn(context.Background(), sessions.SpawnRequest{Task: "someone else's", WorkingDir: f.w.Work})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"wait", "check_session", "converse", "end_session"} {
		args := map[string]any{"session_id": stranger.ID, "message": "hi"}
		if tool == "wait" {
			args = map[string]any{"session_ids": []string{stranger.ID}}
		}
		if tool == "check_session" || tool == "end_session" {
			delete(args, "message")
		}
		res := f.call(tool, args, nil)
		if !res.IsError || !strings.Contains(res.Text, "is not one of your workers (it was started by user)") {
			t.Errorf("%s on a stranger: %+v", tool, res)
		}
	}
	res := f.call("check_session", map[string]any{"session_id": "0123abcd"}, nil)
	if !res.IsError || !strings.Contains(res.Text, `no worker "0123abcd"`) {
		t.Errorf("unknown id: %+v", res)
	}
	// A follow-up queued for it, which ending it drops: the answer says so.
	if _, err := f.w.Manager.Inject(context.Background(), id, "then this"); err != nil {
		t.Fatal(err)
	}
	var end struct {
		Stopped bool   `json:"stopped"`
		Status  string `json:"status"`
		Deleted bool   `json:"deleted"`
		Dropped int    `json:"dropped_follow_ups"`
	}
	f.mustOK("end_session", map[string]any{"session_id": id, "reason": "stuck"}, &end)
	if !end.Stopped || end.Status != "killed" || end.Deleted || end.Dropped != 1 {
		t.Errorf("end %+v", end)
	}
	if s, err := f.w.Manager.Get(context.Background(), id); err != nil || s.Error != "ended by the orchestrator: stuck" {
		t.Errorf("the record does not say why it was ended: %q %v", s.Error, err)
	}
	end.Dropped = 0
	f.mustOK("end_session", map[string]any{"session_id": id, "delete": true}, &end)
	if end.Stopped || !end.Deleted || end.Dropped != 0 {
		t.Errorf("end %+v", end)
	}
	if _, err := f.w.Manager.Get(context.Background(), id); err == nil {
		t.Error("the deleted worker is still there")
	}
}

// The timeout a wait asks for is clamped to 10 s .. the cap (default an
// hour), and the note says so.
func TestWaitTimeoutIsClamped(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		opt  WorkerOptions
		req  float64
		want time.Duration
		note string
	}{
		{WorkerOptions{}, 1, 10 * time.Second, "timeout_s 1 raised to the minimum, 10"},
		{WorkerOptions{}, math.NaN(), 10 * time.Second, "timeout_s NaN raised to the minimum, 10"},
		{WorkerOptions{}, 45, 45 * time.Second, ""},
		{WorkerOptions{}, 5000, time.Hour, "timeout_s 5000 lowered to the maximum, 3600"},
		{WorkerOptions{WaitCap: 50 * time.Second}, 60, 50 * time.Second, "timeout_s 60 lowered to the maximum, 50"},
		{WorkerOptions{WaitCap: 5 * time.Second}, 60, 10 * time.Second, "timeout_s 60 lowered to the maximum, 10"},
		{WorkerOptions{MinWait: 2 * time.Second}, 1, 2 * time.Second, "timeout_s 1 raised to the minimum, 2"},
	} {
		w := &workers{opt: c.opt}
		req := c.req
		if got, note := w.waitTimeout(&req); got != c.want || note != c.note {
			t.Errorf("%+v, timeout_s %g: %v %q, want %v %q", c.opt, c.req, got, note, c.want, c.note)
		}
	}
	if got, note := (&workers{}).waitTimeout(nil); got != DefaultWaitSeconds*time.Second || note != "" {
		t.Errorf("no timeout_s: %v %q", got, note)
	}
}

func TestMaxWorkersAndConfinement(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	gate := filepath.Join(t.TempDir(), "gate")
	f.w.Script(map[string][]fakeagent.Step{"first": append([]fakeagent.Step{fakeagent.WaitFile(gate)}, fakeagent.Completes("first done", 10)...)})
	first := f.delegate("first")
	res := f.call("delegate", map[string]any{"task": "second"}, nil)
	if !res.IsError || !strings.Contains(res.Text, "1 workers are already running and the limit is 1 (max_workers)") {
		t.Fatalf("second delegate: %+v", res)
	}
	os.WriteFile(gate, nil, 0o600)
	var wr waitResult
	f.mustOK("wait", map[string]any{"session_ids": []string{first}}, &wr)
	res = f.call("delegate", map[string]any{"task": "third", "working_dir": "/"}, nil)
	if !res.IsError || !strings.Contains(res.Text, "outside the allowed directories") {
		t.Errorf("outside: %+v", res)
	}
	res = f.call("delegate", map[string]any{"task": "  "}, nil)
	if !res.IsError || !strings.Contains(res.Text, "task is empty") {
		t.Errorf("empty: %+v", res)
	}
	res = f.call("delegate", map[string]any{"task": "x", "adapter": "nosuch"}, nil)
	if !res.IsError || !strings.Contains(res.Text, `unknown adapter "nosuch"`) {
		t.Errorf("bad adapter: %+v", res)
	}
	list, _ := f.w.Manager.List(context.Background(), listing.Options{})
	if len(list) != 1 {
		t.Errorf("refused delegates recorded sessions: %d", len(list))
	}
	// The slot is free again.
	f.delegate("fourth")
}

func TestConverse(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	gate := filepath.Join(t.TempDir(), "gate")
	f.w.Script(map[string][]fakeagent.Step{
		"start":       fakeagent.Completes("started", 10),
		"and then":    append([]fakeagent.Step{fakeagent.WaitFile(gate)}, fakeagent.Completes("then done", 20)...),
		"and finally": fakeagent.Completes("finally done", 30),
	})
	id := f.delegate("start")
	var wr waitResult
	f.mustOK("wait", map[string]any{"session_ids": []string{id}}, &wr)
	var c struct {
		Outcome string `json:"outcome"`
		Turn    int    `json:"turn"`
		Note    string `json:"note"`
	}
	f.mustOK("converse", map[string]any{"session_id": id, "message": "and then"}, &c)
	if c.Outcome != "resumed" || c.Turn != 2 {
		t.Fatalf("converse to a finished worker: %+v", c)
	}
	f.mustOK("converse", map[string]any{"session_id": id, "message": "and finally"}, &c)
	if c.Outcome != "queued" || !strings.Contains(c.Note, "queued") {
		t.Fatalf("converse to a busy worker: %+v", c)
	}
	os.WriteFile(gate, nil, 0o600)
	// A queued follow-up keeps the worker unsettled: one wait covers both turns.
	f.mustOK("wait", map[string]any{"session_ids": []string{id}}, &wr)
	if len(wr.Finished) != 1 || wr.Finished[0].LastMessage != "finally done" {
		t.Fatalf("after the follow-ups: %+v", wr)
	}
	res := f.call("converse", map[string]any{"session_id": id, "message": " "}, nil)
	if !res.IsError || !strings.Contains(res.Text, "message is empty") {
		t.Errorf("empty message: %+v", res)
	}
}

// busy waits until a worker's turn runs, its thread known: it can be
// interrupted and resumed.
func (f *fixture) busy(id string) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sub, err := f.w.Manager.Subscribe(ctx, watch.SubscribeOptions{IDs: []string{id}})
	if err != nil {
		f.t.Fatal(err)
	}
	defer sub.Close()
	for u := range sub.C() {
		if s := u.Session; s != nil && s.Interruptible() && s.ThreadID != "" {
			return
		}
	}
	f.t.Fatalf("worker %s never got busy (%v)", record.ShortID(id), sub.Err())
}

// converse with interrupt stops a busy worker's turn and continues its
// thread with the message at once, before what was queued without it.
func TestConverseInterrupts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	never := filepath.Join(t.TempDir(), "never")
	f.w.Script(map[string][]fakeagent.Step{
		"the long way": {fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), fakeagent.Out(`{"type":"turn.started"}`), fakeagent.WaitFile(never)},
		"queued":       fakeagent.Completes("queued done", 20),
		"redirect":     fakeagent.Completes("redirected", 30),
	})
	id := f.delegate("the long way")
	f.busy(id)
	var c struct {
		Outcome string `json:"outcome"`
		Turn    int    `json:"turn"`
		Note    string `json:"note"`
	}
	f.mustOK("converse", map[string]any{"session_id": id, "message": "queued"}, &c)
	f.mustOK("converse", map[string]any{"session_id": id, "message": "redirect", "interrupt": true}, &c)
	if c.Outcome != string(sessions.InjectInterrupted) || c.Turn != 1 || !strings.Contains(c.Note, "interrupted") {
		t.Fatalf("converse with interrupt: %+v", c)
	}
	var wr waitResult
	f.mustOK("wait", map[string]any{"session_ids": []string{id}}, &wr)
	s, err := f.w.Manager.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range s.Turns {
		got = append(got, tr.Prompt+":"+string(tr.Status()))
	}
	if strings.Join(got, ",") != "the long way:interrupted,redirect:completed,queued:completed" || s.Status() != record.StatusCompleted {
		t.Fatalf("turns %q, status %s", got, s.Status())
	}
}

// Delegate calls made at once (the model's parallel tool calls, or
// several clients) never pass max_workers together: with a limit of 4, 4
// of 6 start and 2 are refused saying why.
func TestParallelDelegatesKeepMaxWorkers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 4)
	gate := filepath.Join(t.TempDir(), "gate")
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o600) })
	steps := append([]fakeagent.Step{fakeagent.WaitFile(gate)}, fakeagent.Completes("done", 10)...)
	f.w.Script(map[string][]fakeagent.Step{"": steps})
	var wg sync.WaitGroup
	results := make([]Result, 6)
	for i := range results {
		wg.Go(func() { results[i] = f.call("delegate", map[string]any{"task": "job " + string(rune('a'+i))}, nil) })
	}
	wg.Wait()
	started, refused := 0, 0
	for _, res := range results {
		switch {
		case !res.IsError:
			started++
		case strings.Contains(res.Text, "4 workers are already running and the limit is 4 (max_workers)"):
			refused++
		default:
			t.Errorf("delegate: %s", res.Text)
		}
	}
	list, _ := f.w.Manager.List(context.Background(), listing.Options{Active: true})
	if started != 4 || refused != 2 || len(list) != 4 {
		t.Fatalf("%d started, %d refused, %d running; want 4, 2, 4", started, refused, len(list))
	}
}

// A prefix that one of the caller's workers and someone else's session
// share names the caller's worker: the others are not its concern, and
// were named to it in the ambiguity.
func TestAPrefixIsResolvedAmongTheCallersWorkers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 0)
	f.w.Script(map[string][]fakeagent.Step{"mine": fakeagent.Completes("mine done", 1)})
	mine := f.delegate("mine")
	f.mustOK("wait", map[string]any{"session_ids": []string{mine}}, nil)
	st := f.w.Manager.Store()
	other, err := st.Load(mine)
	if err != nil {
		t.Fatal(err)
	}
	// Someone else's session whose id starts as the worker's does.
	other.ID, other.Source = mine[:1]+strings.Repeat("0", 7)+mine[8:], record.UserSource
	if other.ID == mine {
		other.ID = mine[:1] + strings.Repeat("1", 7) + mine[8:]
	}
	if err := os.MkdirAll(filepath.Join(st.SessionDir(other.ID), "turns"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := st.BumpGeneration(t.Context(), func() error { return st.Save(other) }); err != nil {
		t.Fatal(err)
	}
	if _, err := f.w.Manager.Get(t.Context(), mine[:1]); err == nil {
		t.Fatalf("the prefix %q names one session of the state dir: the test needs two", mine[:1])
	}
	// Spelt as a whole id may be, too: in capitals, with spaces around.
	for _, p := range []string{mine[:1], " " + strings.ToUpper(mine[:1]) + " "} {
		res := f.mustOK("check_session", map[string]any{"session_id": p}, nil)
		if !strings.Contains(res.Text, record.ShortID(mine)) || strings.Contains(res.Text, record.ShortID(other.ID)) {
			t.Fatalf("check_session of the shared prefix %q: %s", p, res.Text)
		}
	}
	huge := strings.Repeat("f", 100000)
	if res := f.call("check_session", map[string]any{"session_id": huge}, nil); !res.IsError || len(res.Text) > 500 {
		t.Fatalf("an unknown id of 100 kB: %d bytes back", len(res.Text))
	}
}

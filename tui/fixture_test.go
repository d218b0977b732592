package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/watch"
	"github.com/zwarm/zwarm/watchers"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	code := m.Run()
	if mkstate.path != "" {
		os.RemoveAll(filepath.Dir(mkstate.path)) // the generator built for the tests
	}
	os.Exit(code)
}

// clock is the fixed "now" of every test.
var clock = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fixture is a state dir with sessions written directly, as a supervisor
// would have left them.
type fixture struct {
	t   testing.TB
	dir string
	m   *sessions.Manager
	// checkout is where the dashboard is started (Options.Dir).
	checkout string
	// notifyRun, if set, is the dashboard's Options.NotifyRun.
	notifyRun func(prev, cur *runs.Record)
}

func newFixture(t testing.TB) *fixture {
	dir := t.TempDir()
	st, err := state.NewStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, dir: dir, m: sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin()})}
}

type sessOpt func(*record.Session)

// add writes a session with n ended turns (the last one running if the
// status is running) and returns its id.
func (f *fixture) add(n int, status record.Status, task string, age time.Duration, opts ...sessOpt) string {
	f.t.Helper()
	id := fmt.Sprintf("%08x-0000-4000-8000-%012x", 0x3f2a0000+n, n)
	created := clock.Add(-age)
	code := 0
	s := sessionstest.WithStatus(record.Session{Version: record.SchemaVersion, ID: id, Task: task, Adapter: "codex",
		Model: "gpt-5.1-codex", WorkingDir: "/w", Source: record.UserSource, CreatedAt: created, UpdatedAt: created,
		Turn: 1, ThreadID: "thread-1", Usage: record.Usage{InputTokens: 1200, OutputTokens: 300, TotalTokens: 1500}}, status)
	cost := 0.0045
	s.CostUSD = &cost
	turn := sessionstest.WithStatus(record.Turn{N: 1, Prompt: task, StartedAt: created, Usage: s.Usage, CostUSD: &cost}, status)
	if status.Finished() {
		end := created.Add(age / 2)
		s.EndedAt, s.ExitCode, turn.EndedAt, turn.ExitCode = &end, &code, &end, &code
		if status == record.StatusFailed {
			s.Error, turn.Error = "unexpected status 500", "unexpected status 500"
			one := 1
			s.ExitCode, turn.ExitCode = &one, &one
		}
	} else {
		self, err := proc.RefOf(os.Getpid())
		if err != nil {
			f.t.Fatal(err)
		}
		self.Role = "supervisor"
		s.Owner = self
	}
	s.Turns = []record.Turn{turn}
	for _, o := range opts {
		o(&s)
	}
	sdir := filepath.Join(f.dir, "sessions", id)
	os.MkdirAll(filepath.Join(sdir, "turns"), 0o700)
	os.MkdirAll(filepath.Join(sdir, "inbox"), 0o700)
	data, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(sdir, "meta.json"), data, 0o600); err != nil {
		f.t.Fatal(err)
	}
	f.writeTurn(id, 1, sampleTurn(status))
	return id
}

// touch rewrites a session's record with a new update time, as a
// supervisor's progress write would.
// nextTurn records that a session's next turn started, as its supervisor
// would: in one rename.
func (f *fixture) nextTurn(id string) {
	path := filepath.Join(f.dir, "sessions", id, "meta.json")
	data, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	var s record.Session
	if err := json.Unmarshal(data, &s); err != nil {
		f.t.Fatal(err)
	}
	n := len(s.Turns) + 1
	s.Turns = append(s.Turns, sessionstest.WithStatus(record.Turn{N: n, Prompt: "also docs", StartedAt: clock}, record.StatusRunning))
	sessionstest.SetStatus(&s, record.StatusRunning)
	s.Turn, s.UpdatedAt = n, clock.Add(time.Second)
	data, _ = json.Marshal(s)
	if err := os.WriteFile(path+".tmp", data, 0o600); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) touch(id string, at time.Time) {
	path := filepath.Join(f.dir, "sessions", id, "meta.json")
	data, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	var s record.Session
	if err := json.Unmarshal(data, &s); err != nil {
		f.t.Fatal(err)
	}
	s.UpdatedAt = at.UTC()
	data, _ = json.Marshal(s)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) writeTurn(id string, n int, body string) {
	path := filepath.Join(f.dir, "sessions", id, "turns", fmt.Sprintf("turn_%d.jsonl", n))
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) appendTurn(id string, n int, line string) {
	path := filepath.Join(f.dir, "sessions", id, "turns", fmt.Sprintf("turn_%d.jsonl", n))
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		f.t.Fatal(err)
	}
	defer fh.Close()
	fh.WriteString(line + "\n")
}

func sampleTurn(st record.Status) string {
	body := `{"type":"thread.started","thread_id":"thread-1"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Reading the CLI** before changing flags"}}
{"type":"item.started","item":{"id":"item_1","type":"todo_list","items":[{"text":"add the flag","completed":true},{"text":"update docs","completed":false}]}}
{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc 'go test ./...'","aggregated_output":"ok  \texample/cli\t0.01s\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_3","type":"file_change","changes":[{"path":"/w/cmd/root.go","kind":"update"}],"status":"completed"}}
`
	switch st {
	case record.StatusRunning:
		return body + `{"type":"item.started","item":{"id":"item_4","type":"command_execution","command":"/bin/bash -lc 'go vet ./...'","aggregated_output":"","exit_code":null,"status":"in_progress"}}` + "\n"
	case record.StatusFailed:
		return body + `{"type":"turn.failed","error":{"message":"unexpected status 500"}}` + "\n"
	}
	return body + `{"type":"item.completed","item":{"id":"item_5","type":"agent_message","text":"Added --verbose; tests pass."}}
{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":0,"output_tokens":300,"reasoning_output_tokens":0}}
`
}

// standard is the fixture of the golden views: one session of each kind.
func standard(t *testing.T) *fixture {
	f := newFixture(t)
	f.add(1, record.StatusCompleted, "add a --verbose flag to the CLI", 2*time.Hour)
	f.add(2, record.StatusFailed, "fix the failing integration test in the payment service", 90*time.Minute)
	f.add(3, record.StatusKilled, "rewrite the docs", time.Hour)
	f.add(4, record.StatusCompleted, "bump dependencies", 50*time.Second, func(s *record.Session) {
		s.Source = record.RunSource("9c1d2e3f-0000-4000-8000-000000000000")
	})
	f.add(5, record.StatusRunning, "add --verbose to every subcommand and document it", 3*time.Minute, func(s *record.Session) {
		s.PendingInjects = 1
	})
	return f
}

// newModel builds a dashboard on the fixture, sized, with everything its
// Init asked for done and the selected session's trajectory shown.
func (f *fixture) newModel(w, h int) Model {
	return f.start(f.m, w, h)
}

func (f *fixture) start(src Sessions, w, h int) Model {
	return f.startWith(src, nil, w, h)
}

func (f *fixture) startWith(src Sessions, alerts <-chan watchers.Alert, w, h int) Model {
	ctx, cancel := context.WithCancel(context.Background())
	tracked := &tracking{Sessions: src}
	// Every subscription the model started has ended before the test's
	// files are removed: none may still be writing a record.
	f.t.Cleanup(func() { cancel(); tracked.closeAll() })
	trackedRuns := &trackingRuns{Runs: RunsOf(f.dir)}
	f.t.Cleanup(func() { cancel(); trackedRuns.closeAll() })
	m := New(ctx, Options{Sessions: tracked, Runs: trackedRuns.Subscribe, SendRun: SendRunOf(f.dir), NotifyRun: f.notifyRun, StateDir: "/state", Dir: f.checkout, Now: func() time.Time { return clock }, Tick: -1, Alerts: alerts})
	m = send(m, tea.WindowSizeMsg{Width: w, Height: h})
	newHarness()
	m = drive(f.t, m, m.Init())
	return settle(f.t, m, func(m Model) bool { return m.loaded && (m.detail.ID() == "" || m.following() && m.detailReady()) })
}

// following reports whether the detail pane has its subscription.
func (m Model) following() bool { return m.trajSub != nil || m.runTrajSub != nil }

// trackingRuns remembers the run subscriptions a dashboard starts.
type trackingRuns struct {
	Runs
	mu   sync.Mutex
	subs []*runs.Subscription
}

func (t *trackingRuns) Subscribe(ctx context.Context, opt runs.SubscribeOptions) (*runs.Subscription, error) {
	sub, err := t.Runs(ctx, opt)
	if err == nil {
		t.mu.Lock()
		t.subs = append(t.subs, sub)
		t.mu.Unlock()
	}
	return sub, err
}

func (t *trackingRuns) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.subs {
		s.Close()
	}
}

// tracking remembers the subscriptions a dashboard starts, and counts the
// calls that are under way (see working).
type tracking struct {
	Sessions
	mu   sync.Mutex
	subs []*watch.Subscription
}

// working counts the calls into the sessions that commands have under way:
// drive waits for them, however long they take, where it would stop
// waiting for a command that waits on a subscription.
var working atomic.Int64

func (t *tracking) Inject(ctx context.Context, id, msg string) (*sessions.InjectResult, error) {
	working.Add(1)
	defer working.Add(-1)
	return t.Sessions.Inject(ctx, id, msg)
}

func (t *tracking) Interrupt(ctx context.Context, id, msg string) (*sessions.InjectResult, error) {
	working.Add(1)
	defer working.Add(-1)
	return t.Sessions.Interrupt(ctx, id, msg)
}

func (t *tracking) KillReport(ctx context.Context, id, reason string) (*sessions.Killed, error) {
	working.Add(1)
	defer working.Add(-1)
	return t.Sessions.KillReport(ctx, id, reason)
}

func (t *tracking) Remove(ctx context.Context, id string, force bool) (string, error) {
	working.Add(1)
	defer working.Add(-1)
	return t.Sessions.Remove(ctx, id, force)
}

func (t *tracking) Diff(ctx context.Context, id string, w io.Writer, req sessions.DiffRequest) (*record.Session, error) {
	working.Add(1)
	defer working.Add(-1)
	return t.Sessions.Diff(ctx, id, w, req)
}

func (t *tracking) Land(ctx context.Context, id string, opt sessions.LandOptions) (*sessions.LandResult, error) {
	working.Add(1)
	defer working.Add(-1)
	return t.Sessions.Land(ctx, id, opt)
}

func (t *tracking) Subscribe(ctx context.Context, opt watch.SubscribeOptions) (*watch.Subscription, error) {
	working.Add(1)
	sub, err := t.Sessions.Subscribe(ctx, opt)
	working.Add(-1)
	if err == nil {
		t.mu.Lock()
		t.subs = append(t.subs, sub)
		t.mu.Unlock()
	}
	return sub, err
}

func (t *tracking) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.subs {
		s.Close()
	}
}

// detailReady reports whether the detail pane shows its session's steps.
func (m Model) detailReady() bool { return m.detail.Loaded() }

// send delivers one message.
func send(m Model, msg tea.Msg) Model {
	next, _ := m.Update(msg)
	return next.(Model)
}

// harness receives the messages of the commands a test's model started:
// each command runs on a goroutine of its own, as the Bubble Tea runtime
// runs them, so a command waiting on a subscription waits for real.
var harness chan answer

// answer is a command's message, with the drive it was started in.
type answer struct {
	msg   tea.Msg
	drive int
}

func newHarness() { harness = make(chan answer, 1024) }

// drives numbers the calls of drive; pending counts the commands started
// in the current one (by it or by their messages) that have not answered.
// Only the test's goroutine touches them (the tests of this package share
// the harness and run one at a time).
var drives, pending int

// quiet is how long drive waits for more messages, while commands it
// started still run (one may wait on a subscription for good) but none is
// in a call into the sessions (working).
const quiet = 60 * time.Millisecond

func start(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	ch, d := harness, drives
	pending++
	go func() { ch <- answer{cmd(), d} }()
}

// drive runs a command and everything it leads to: until every command
// it led to has answered, or, while some still run, until no message has
// arrived for a moment and no call into the sessions is under way.
func drive(t testing.TB, m Model, cmd tea.Cmd) Model {
	t.Helper()
	drives++
	pending = 0
	began := time.Now()
	start(cmd)
	for pending > 0 {
		select {
		case a := <-harness:
			m = deliver(m, a)
		case <-time.After(quiet):
			// A call never done (30 s) is for the test's checks to find.
			if working.Load() == 0 || time.Since(began) > 30*time.Second {
				return m
			}
		}
	}
	return m
}

// settle drives the model until cond holds, or fails the test.
func settle(t testing.TB, m Model, cond func(Model) bool) Model {
	t.Helper()
	deadline := time.After(time.Minute) // a ceiling, for a loaded machine
	for !cond(m) {
		select {
		case a := <-harness:
			m = deliver(m, a)
		case <-deadline:
			t.Fatalf("the dashboard never got there; it shows:\n%s", m.View())
		}
	}
	return m
}

func deliver(m Model, a answer) Model {
	if a.drive == drives {
		pending--
	}
	switch msg := a.msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			start(c)
		}
	default:
		next, cmd := m.Update(msg)
		m = next.(Model)
		start(cmd)
	}
	return m
}

// press types keys.
func press(t *testing.T, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range keys {
		next, cmd := m.Update(keyMsg(k))
		m = drive(t, next.(Model), cmd)
	}
	return m
}

// keyMsg is the message of a key, by name.
func keyMsg(k string) tea.KeyMsg {
	switch k {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	case "ctrl+d":
		return tea.KeyMsg{Type: tea.KeyCtrlD}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	case "left":
		return tea.KeyMsg{Type: tea.KeyLeft}
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

func sizeMsg(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

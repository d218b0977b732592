package sessions_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/testbin"
	"github.com/zwarm/zwarm/sessions/sessionstest/testworld"
	"github.com/zwarm/zwarm/sessions/state"
)

// The tests of this package run real processes: the fake agent (this
// test binary through a link named fakeagent, see testbin) and, for
// everything that goes through Spawn, this very test binary as the
// supervisor (TestMain turns it into one when helperEnv is set).

const (
	helperEnv     = "ZWARM_SESSIONS_TEST_SUPERVISOR"
	lockHolderEnv = "ZWARM_SESSIONS_TEST_HOLD_LOCK"
	// startGate, in a test's state dir, holds back the supervisors started
	// there while it exists, before they do anything, signal handling
	// included: a zwarm binary still starting, for exactly as long as the
	// test needs (see holdAtTheGate). A file, not an environment variable,
	// so that the tests that use it can run in parallel.
	startGate = "start-gate"
	// peakWanted, in a test's state dir, asks its supervisors to write
	// their peak resident memory (VmHWM of /proc/self/status) to
	// peak-<id> beside it just before they exit. A file, not an
	// environment variable, so that the tests that ask can run in
	// parallel.
	peakWanted = "peak-wanted"
)

var fakeAgentBin string

// AfterTests run when every test and benchmark of the package is done
// (tests of package sessions_test add to it: they share this TestMain).
var AfterTests []func()

// confineArgv makes the test binary confine a landing's verify, as
// zwarm __confine does.
var confineArgv = []string{os.Args[0], "__confine"}

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == confineArgv[1] {
		os.Exit(proc.RunConfined(os.Args[2:]))
	}
	testbin.Serve(map[string]testbin.Program{"fakeagent": fakeagent.Main})
	if path := os.Getenv(lockHolderEnv); path != "" {
		// Holds a session's lock until killed (see
		// TestKillTakesALockThatIsNeverReleased), or until SIGTERM, when
		// it lets go: a lease lock (ZWARM_LOCKS=lease) outlives a holder
		// killed outright until its lease runs out.
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		l, err := state.LockFile(stateDirOfLock(path), path)
		if err != nil {
			os.Exit(1)
		}
		select {
		case <-term:
		case <-time.After(time.Hour):
		}
		l.Unlock()
		return
	}
	if dir := os.Getenv(spawnerEnv); dir != "" {
		// Spawns with a limit from another process (see
		// TestSpawnLimitHoldsAcrossCallsAndProcesses).
		fakeAgentBin = os.Getenv("ZWARM_SESSIONS_TEST_FAKEAGENT")
		os.Exit(spawnerProcess(dir))
	}
	if dir := os.Getenv(landerEnv); dir != "" {
		// Lands a session (see BenchmarkLandLargeBinary).
		os.Exit(landerProcess(dir))
	}
	if os.Getenv(helperEnv) != "" {
		fakeAgentBin = os.Getenv("ZWARM_SESSIONS_TEST_FAKEAGENT")
		os.Exit(testworld.Supervisor{Adapters: testAdapters{},
			Before: func(st *state.Store, _ string) { holdAtTheGate(st.Dir()) },
			After:  func(st *state.Store, id string) { reportPeak(st.Dir(), id) }}.Main(os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "zwarm-sessions-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if fakeAgentBin, err = testbin.Link(dir, "fakeagent"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("ZWARM_SESSIONS_TEST_FAKEAGENT", fakeAgentBin)
	err = testworld.Setenv(dir)
	if err == nil {
		// The supervisors Spawn starts are this binary.
		err = os.Setenv(helperEnv, "1")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	waitersInParallel()
	code := m.Run()
	for _, f := range AfterTests {
		f()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// waitersInParallel lets four parallel tests run at once where -parallel
// does not say otherwise (its default is the number of CPUs): this
// package's parallel tests mostly wait on the processes they start (a
// grace period, a lock timeout, a turn), not on a CPU.
func waitersInParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if n, _ := strconv.Atoi(flag.Lookup("test.parallel").Value.String()); !set && n < 4 {
		flag.Set("test.parallel", "4")
	}
}

// holdAtTheGate waits while the state dir's startGate exists: at most ten
// minutes, so that a test that failed with the gate shut leaves no
// supervisor waiting for ever.
func holdAtTheGate(stateDir string) {
	gate := filepath.Join(stateDir, startGate)
	for end := time.Now().Add(10 * time.Minute); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(gate); err != nil {
			return
		}
	}
}

// testAdapters has one adapter, "fake": the fake agent, run like codex
// (prompt on stdin) or, with a live script, like claude with stream-json
// input.
type testAdapters struct{}

func (testAdapters) Lookup(name string) (agent.Adapter, error) {
	if name != "fake" {
		return nil, fmt.Errorf("unknown adapter %q (known: fake)", name)
	}
	return fakeAdapter{}, nil
}

func (testAdapters) Names() []string { return []string{"fake"} }

type fakeAdapter struct{}

func (fakeAdapter) Name() string               { return "fake" }
func (fakeAdapter) DefaultModel(string) string { return "gpt-5.1-codex" }
func (fakeAdapter) NewParser() agent.Parser    { return &testParser{} }
func (fakeAdapter) Command(req agent.TurnRequest) (agent.Command, error) {
	env := testworld.AgentEnvBeside(req.StateDir)
	data, err := os.ReadFile(testworld.ScriptBeside(req.StateDir))
	if err != nil {
		return agent.Command{}, fmt.Errorf("fake agent: no script: %w", err)
	}
	cmd := agent.Command{Path: fakeAgentBin, Dir: req.WorkingDir, Env: env}
	if strings.Contains(string(data), `"live":true`) {
		cmd.Input = func(p string) []byte {
			b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": p}}}})
			return append(b, '\n')
		}
		return cmd, nil
	}
	// The session's settings, as an agent would be given them on every
	// turn (the fake agent logs its command line).
	var set []string
	if req.ReasoningEffort != "" {
		if req.ReasoningEffort == "huge" {
			return agent.Command{}, config.Invalidf("unknown fake reasoning effort %q", req.ReasoningEffort)
		}
		set = append(set, "--effort="+req.ReasoningEffort)
	}
	if req.Instructions != "" {
		set = append(set, "--instructions="+req.Instructions)
	}
	if req.Sandbox != "" {
		set = append(set, "--sandbox="+req.Sandbox)
	}
	if req.ThreadID != "" {
		cmd.Args = append(append([]string{"resume"}, set...), "--", req.ThreadID, "-")
	} else {
		cmd.Args = append(set, "--", "-")
	}
	cmd.Stdin = []byte(req.Prompt)
	return cmd, nil
}

// Interactive runs the fake agent as a person's CLI in the thread: its
// prompt is the thread id, so a script's by_prompt entry for the thread
// says what the "person" does.
func (fakeAdapter) Interactive(req agent.TurnRequest) (agent.Command, error) {
	return agent.Command{Path: fakeAgentBin, Dir: req.WorkingDir, Args: []string{"interactive", "--", req.ThreadID},
		Env: testworld.AgentEnvBeside(req.StateDir)}, nil
}

// testParser reads the codex-like lines the fake agent prints.
type testParser struct{ out []record.Event }

func (p *testParser) ParseLine(line []byte) []record.Event {
	var l struct {
		Type     string `json:"type"`
		ThreadID string `json:"thread_id"`
		Item     *struct {
			ID, Type, Text string
		} `json:"item"`
		Usage   *record.Usage `json:"usage"`
		Message string        `json:"message"`
		Error   *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	p.out = p.out[:0]
	if err := json.Unmarshal(line, &l); err != nil {
		return append(p.out, record.RawEvent(line))
	}
	switch l.Type {
	case "thread.started":
		p.out = append(p.out, record.Event{Type: record.EventThreadStarted, ThreadID: l.ThreadID})
	case "item.completed":
		if l.Item != nil && l.Item.Type == "agent_message" {
			p.out = append(p.out, record.Event{Type: record.EventMessage, ItemID: l.Item.ID, Phase: record.PhaseCompleted, Text: l.Item.Text})
		}
	case "turn.completed":
		p.out = append(p.out, record.Event{Type: record.EventTurnCompleted, Usage: l.Usage, Cumulative: true})
	case "turn.failed":
		msg := ""
		if l.Error != nil {
			msg = l.Error.Message
		}
		p.out = append(p.out, record.Event{Type: record.EventTurnFailed, Text: msg})
	case "error":
		p.out = append(p.out, record.Event{Type: record.EventError, Text: l.Message})
	case "noise":
	default:
		p.out = append(p.out, record.Event{Type: record.EventUnknown, Text: l.Type})
	}
	return p.out
}

// world is a testworld whose sessions run the fake adapter, supervised by
// this test binary.
type world struct{ *testworld.World }

func newWorld(t testing.TB) *world {
	t.Helper()
	w := &world{}
	w.World = testworld.New(t, testworld.Options{Config: "kill_grace = \"300ms\"\n", Adapters: testAdapters{},
		SupervisorArgv: []string{os.Args[0]}, ConfineArgv: confineArgv,
		// What a kill would find of the session, cgroup included.
		Leftovers: func(id string) []int { return pidsOf(w.Manager.Containment(id).Procs()) }})
	w.SetScript(fakeagent.Script{Default: fakeagent.Completes("done", 700)})
	return w
}

func (w *world) spawn(task string) *record.Session {
	w.T.Helper()
	s, err := w.Manager.Spawn(context.Background(), sessions.SpawnRequest{Task: task, Adapter: "fake", WorkingDir: w.Work})
	if err != nil {
		w.T.Fatal(err)
	}
	return s
}

// wait waits for a session to settle, with a deadline.
func (w *world) wait(id string) *record.Session {
	w.T.Helper()
	return w.waitFor(id, 2*time.Minute)
}

func (w *world) waitFor(id string, limit time.Duration) *record.Session {
	w.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	list, err := w.Manager.Wait(ctx, []string{id}, sessions.WaitOptions{})
	if err != nil {
		now := "unreadable"
		if s, lerr := w.Store.Load(id); lerr == nil {
			now = fmt.Sprintf("%s, turn %d running %v", s.Status(), s.Turn, s.TurnRunning())
		}
		w.T.Fatalf("waiting up to %s for session %s to settle: %v; it is %s", limit, record.ShortID(id), err, now)
	}
	return list[0]
}

func slogTo(f *os.File) *slog.Logger { return slog.New(slog.NewTextHandler(f, nil)) }

func pidsOf(procs []proc.Stat) []int {
	pids := make([]int, len(procs))
	for i, p := range procs {
		pids[i] = p.PID
	}
	return pids
}

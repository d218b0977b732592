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
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/supervisor"
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

func TestMain(m *testing.M) {
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
		os.Exit(helperSupervisor(os.Args[1:]))
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
	if err := setEnv(dir); err != nil {
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

// setEnv sets what every test's processes share, once, so that tests
// need no t.Setenv and may run in parallel: the supervisors Spawn starts
// are this binary (helperEnv), git's user config is a file of the tests'
// (a name for commits, main as the first branch, none of the user's
// settings), and worktrees go under dir (XDG_DATA_HOME), each under a
// name of its repository's, and every test has a repository of its own.
func setEnv(dir string) error {
	cfg := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o600); err != nil {
		return err
	}
	for k, v := range map[string]string{helperEnv: "1", "GIT_CONFIG_GLOBAL": cfg, "GIT_CONFIG_NOSYSTEM": "1",
		"XDG_DATA_HOME": filepath.Join(dir, "data"), "XDG_CONFIG_HOME": filepath.Join(dir, "config")} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
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

// helperSupervisor is `zwarm __supervise [--state-dir DIR] [--detach] ID`,
// played by the test binary.
func helperSupervisor(args []string) int {
	var stateDir, id string
	detach := false
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--state-dir":
			i++
			stateDir = args[i]
		case "--detach":
			detach = true
		default:
			if !strings.HasPrefix(args[i], "-") {
				id = args[i]
			}
		}
	}
	st, err := state.NewStore(stateDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if detach {
		// "__supervise" in its command line, as zwarm's: a kill signals a
		// recorded supervisor only if its command line says it is one.
		err = sessions.StartDetached(st, id, []string{os.Args[0], "__supervise", "--state-dir", stateDir, id}, os.Stdout)
	} else {
		holdAtTheGate(st.Dir())
		err = supervisor.Supervise(context.Background(), supervisor.Options{Store: st, Adapters: testAdapters{}}, id)
		reportPeak(stateDir, id)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
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
	script := filepath.Join(req.StateDir, "script.json")
	data, err := os.ReadFile(script)
	if err != nil {
		return agent.Command{}, fmt.Errorf("fake agent: no script: %w", err)
	}
	cmd := agent.Command{Path: fakeAgentBin, Dir: req.WorkingDir, Env: []string{"FAKEAGENT_SCRIPT=" + script,
		"FAKEAGENT_ARGS_LOG=" + filepath.Join(req.StateDir, "args.log")}}
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
	script := filepath.Join(req.StateDir, "script.json")
	return agent.Command{Path: fakeAgentBin, Dir: req.WorkingDir, Args: []string{"interactive", "--", req.ThreadID},
		Env: []string{"FAKEAGENT_SCRIPT=" + script, "FAKEAGENT_ARGS_LOG=" + filepath.Join(req.StateDir, "args.log")}}, nil
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

// world is one test's state dir and working dir, with a manager whose
// supervisors are this test binary.
type world struct {
	t    testing.TB
	m    *sessions.Manager
	st   *state.Store
	work string
}

func newWorld(t testing.TB) *world {
	t.Helper()
	root := t.TempDir()
	st, err := state.NewStore(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(root, "work")
	os.MkdirAll(work, 0o700)
	os.MkdirAll(st.Dir(), 0o700)
	w := &world{t: t, st: st, work: work,
		m: sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: testAdapters{}, SupervisorArgv: []string{os.Args[0]}})}
	w.script(fakeScript{Default: completes("done", 700)})
	w.config("kill_grace = \"300ms\"\n")
	t.Cleanup(w.cleanup)
	return w
}

// cleanup stops whatever a test left running and fails it if any process
// of its sessions survives.
func (w *world) cleanup() {
	ids, _ := w.st.Ids()
	// A ceiling for the kills and for the supervisors to exit, generous for
	// a machine at load 8 and more.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, id := range ids {
		if s, err := w.m.Get(ctx, id); err == nil && !s.Settled() {
			w.m.Kill(ctx, id)
		}
		// A supervisor that has just settled its session is still tearing
		// down, writing in the session's directory: the test's temporary
		// dir is removed only once it is gone.
		for len(proc.SupervisorsOf(id)) > 0 && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		if left := w.m.Containment(id).Procs(); len(left) > 0 {
			w.t.Errorf("session %s left processes alive: %v", record.ShortID(id), left)
			w.m.SweepOut(ctx, id)
		}
	}
}

type fakeScript struct {
	Before   []map[string]any            `json:"before,omitempty"`
	Default  []map[string]any            `json:"default"`
	ByPrompt map[string][]map[string]any `json:"by_prompt,omitempty"`
	Live     bool                        `json:"live,omitempty"`
}

func (w *world) script(sc fakeScript) {
	w.t.Helper()
	b, _ := json.Marshal(sc)
	if err := os.WriteFile(filepath.Join(w.st.Dir(), "script.json"), b, 0o600); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) config(body string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.st.Dir(), config.File), []byte(body), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

func out(line string) map[string]any { return map[string]any{"out": line} }

// completes is a turn that reports a thread, a message and cumulative usage.
func completes(msg string, cumulativeInput int) []map[string]any {
	return []map[string]any{
		out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		out(`{"type":"turn.started"}`),
		out(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"` + msg + `"}}`),
		out(fmt.Sprintf(`{"type":"turn.completed","usage":{"input_tokens":%d,"cached_input_tokens":0,"output_tokens":10}}`, cumulativeInput)),
	}
}

func (w *world) spawn(task string) *record.Session {
	w.t.Helper()
	s, err := w.m.Spawn(context.Background(), sessions.SpawnRequest{Task: task, Adapter: "fake", WorkingDir: w.work})
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// wait waits for a session to settle, with a deadline.
func (w *world) wait(id string) *record.Session {
	w.t.Helper()
	return w.waitFor(id, 2*time.Minute)
}

func (w *world) waitFor(id string, limit time.Duration) *record.Session {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	list, err := w.m.Wait(ctx, []string{id}, sessions.WaitOptions{})
	if err != nil {
		now := "unreadable"
		if s, lerr := w.st.Load(id); lerr == nil {
			now = fmt.Sprintf("%s, turn %d running %v", s.Status, s.Turn, s.TurnRunning())
		}
		w.t.Fatalf("waiting up to %s for session %s to settle: %v; it is %s", limit, record.ShortID(id), err, now)
	}
	return list[0]
}

// prompts lists the prompts the fake agent was given, in order.
func (w *world) prompts() []string {
	data, _ := os.ReadFile(filepath.Join(w.st.Dir(), "args.log"))
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var inv struct{ Prompt string }
		if json.Unmarshal([]byte(l), &inv) == nil {
			out = append(out, inv.Prompt)
		}
	}
	return out
}

// eventuallySee is eventually for a condition that says what it saw: the
// failure says what was awaited and what was seen last.
func eventuallySee(t testing.TB, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, saw := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after a minute waiting for %s; saw %s", what, saw)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func slogTo(f *os.File) *slog.Logger { return slog.New(slog.NewTextHandler(f, nil)) }

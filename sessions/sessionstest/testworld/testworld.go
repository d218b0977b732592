// Package testworld is one test's world of sessions, as net/http/httptest
// is one test's server: a state dir, a working dir, the fake agent's script
// and its log of invocations, beside each other in a temporary dir, and,
// for a test that drives sessions through the library, a Manager whose
// supervisors are real processes. When the test ends the world stops what
// is still running and fails the test if any process of its sessions
// survives.
//
// Only the agent is fake (sessions/sessionstest/fakeagent): supervisors,
// turn files, process control and git are zwarm's own.
package testworld

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
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
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/state"
)

// Options say what a world has beyond its dirs.
type Options struct {
	// Config is the state dir's config.toml; with none, the state dir is
	// not made: the first command that needs it makes it, as a user's.
	Config string
	// Adapters, with SupervisorArgv, give the world a Manager.
	Adapters       agent.Adapters
	SupervisorArgv []string
	// ConfineArgv is the Manager's (a landing's verify runs through it).
	ConfineArgv []string
	// Stop stops the world's sessions that have not settled when the test
	// ends; without it, the Manager kills each.
	Stop func(ctx context.Context, w *World)
	// Leftovers are the processes of session id that outlived the stop;
	// without it, those carrying the session's marker.
	Leftovers func(id string) []int
}

// World is one test's sessions.
type World struct {
	T testing.TB
	// Dir holds the rest: State, Work, the script and the args log.
	Dir, State, Work string
	// ScriptFile is the fake agent's script (FAKEAGENT_SCRIPT) and ArgsLog
	// its log of invocations (FAKEAGENT_ARGS_LOG).
	ScriptFile, ArgsLog string
	Store               *state.Store
	Manager             *sessions.Manager
	opts                Options
}

// New makes a world whose agent, until the test says otherwise, completes
// every turn at once saying "done".
func New(t testing.TB, opts Options) *World {
	t.Helper()
	dir := t.TempDir()
	w := &World{T: t, Dir: dir, Work: filepath.Join(dir, "work"), opts: opts}
	w.place(filepath.Join(dir, "state"))
	if err := os.MkdirAll(w.Work, 0o700); err != nil {
		t.Fatal(err)
	}
	if opts.Config != "" {
		w.WriteConfig(opts.Config)
	}
	w.open()
	w.SetScript(fakeagent.Script{Default: fakeagent.Completes("done", 100)})
	t.Cleanup(w.cleanup)
	return w
}

// place puts the state dir at dir, with the script and the args log
// beside it.
func (w *World) place(dir string) {
	w.State, w.ScriptFile, w.ArgsLog = dir, ScriptBeside(dir), filepath.Join(filepath.Dir(dir), "args.log")
}

// open opens the store and makes the Manager.
func (w *World) open() {
	st, err := state.NewStore(w.State)
	if err != nil {
		w.T.Fatal(err)
	}
	w.Store = st
	if w.opts.Adapters != nil {
		w.Manager = sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: w.opts.Adapters, SupervisorArgv: w.opts.SupervisorArgv, ConfineArgv: w.opts.ConfineArgv})
	}
}

// MoveState moves the world to the state dir at dir (on a small disk, say),
// taking its config and its script; the sessions of the old one are left
// behind.
func (w *World) MoveState(dir string) {
	w.T.Helper()
	cfg, _ := os.ReadFile(filepath.Join(w.State, config.File))
	script, err := os.ReadFile(w.ScriptFile)
	if err != nil {
		w.T.Fatal(err)
	}
	w.place(dir)
	w.WriteConfig(string(cfg))
	if err := os.WriteFile(w.ScriptFile, script, 0o600); err != nil {
		w.T.Fatal(err)
	}
	w.open()
}

// ScriptBeside is the fake agent's script of the world whose state dir is
// stateDir: an adapter, run by a supervisor, knows only the state dir.
func ScriptBeside(stateDir string) string {
	return filepath.Join(filepath.Dir(stateDir), "script.json")
}

// AgentEnvBeside is AgentEnv of the world whose state dir is stateDir.
func AgentEnvBeside(stateDir string) []string {
	return []string{"FAKEAGENT_SCRIPT=" + ScriptBeside(stateDir), "FAKEAGENT_ARGS_LOG=" + filepath.Join(filepath.Dir(stateDir), "args.log")}
}

// WriteConfig replaces the state dir's config.toml, making the dir.
func (w *World) WriteConfig(body string) {
	w.T.Helper()
	if err := os.MkdirAll(w.State, 0o700); err != nil {
		w.T.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.State, config.File), []byte(body), 0o600); err != nil {
		w.T.Fatal(err)
	}
}

// LetVerifyWrite adds dirs to what a landing's verify may write ([worktrees]
// verify_writable), to the config as it is: a test's verify that leaves
// a mark for it, or commits by hand in a worker's worktree.
func (w *World) LetVerifyWrite(dirs ...string) {
	w.T.Helper()
	body, err := os.ReadFile(filepath.Join(w.State, config.File))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		w.T.Fatal(err)
	}
	quoted := make([]string, len(dirs))
	for i, d := range dirs {
		quoted[i] = strconv.Quote(d)
	}
	line := "verify_writable = [" + strings.Join(quoted, ", ") + "]\n"
	if before, after, ok := strings.Cut(string(body), "[worktrees]\n"); ok {
		w.WriteConfig(before + "[worktrees]\n" + line + after)
		return
	}
	w.WriteConfig(string(body) + "\n[worktrees]\n" + line)
}

// SetScript replaces what the fake agent does.
func (w *World) SetScript(sc fakeagent.Script) {
	w.T.Helper()
	if sc.Default == nil {
		sc.Default = []fakeagent.Step{}
	}
	// Whole, by rename: an agent that starts meanwhile (a session spawned
	// just before) reads the old script or the new, never half of one.
	b, err := json.Marshal(sc)
	if err == nil {
		err = os.WriteFile(w.ScriptFile+".tmp", b, 0o600)
	}
	if err == nil {
		err = os.Rename(w.ScriptFile+".tmp", w.ScriptFile)
	}
	if err != nil {
		w.T.Fatal(err)
	}
}

// AgentEnv is the environment that points the fake agent at the world's
// script and log.
func (w *World) AgentEnv() []string { return AgentEnvBeside(w.State) }

// Invocation is one run of the fake agent, as its args log has it.
type Invocation struct {
	Argv   []string `json:"argv"`
	Cwd    string   `json:"cwd"`
	Prompt string   `json:"prompt"`
}

// Invocations are the fake agent's runs so far, in order.
func (w *World) Invocations() []Invocation {
	w.T.Helper()
	data, err := os.ReadFile(w.ArgsLog)
	if err != nil && !os.IsNotExist(err) {
		w.T.Fatal(err)
	}
	var out []Invocation
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l == "" {
			continue
		}
		var inv Invocation
		if err := json.Unmarshal([]byte(l), &inv); err != nil {
			w.T.Fatalf("the fake agent's args log: %v: %q", err, l)
		}
		out = append(out, inv)
	}
	return out
}

// Prompts are the prompts the fake agent was given, in order.
func (w *World) Prompts() []string {
	var out []string
	for _, inv := range w.Invocations() {
		out = append(out, inv.Prompt)
	}
	return out
}

// IDs are the world's sessions, as the state dir has them.
func (w *World) IDs() []string {
	ids, _ := w.Store.Ids()
	return ids
}

// Repo makes the working dir a git repository on branch main with one
// commit of files; see Setenv for the git config it gets.
func (w *World) Repo(files map[string]string) {
	w.T.Helper()
	w.Git(w.Work, "init", "-q", "-b", "main")
	for name, body := range files {
		path := filepath.Join(w.Work, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			w.T.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			w.T.Fatal(err)
		}
	}
	w.Git(w.Work, "add", "-A")
	w.Git(w.Work, "commit", "-q", "-m", "init")
}

// Git runs git in dir and returns its output, trimmed; a failure fails
// the test.
func (w *World) Git(dir string, args ...string) string {
	w.T.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.T.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// cleanup stops what the test left running, waits for the supervisors to
// exit (the temporary dir goes once they stop writing in it) and fails the
// test if any process of its sessions survives. The ceiling is generous,
// for a machine at load 8 and more.
func (w *World) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ids := w.IDs()
	switch {
	case w.opts.Stop != nil:
		w.opts.Stop(ctx, w)
	case w.Manager != nil:
		for _, id := range ids {
			if s, err := w.Manager.Get(ctx, id); err == nil && !s.Settled() {
				w.Manager.Kill(ctx, id)
			}
		}
	}
	leftovers := w.opts.Leftovers
	if leftovers == nil {
		leftovers = sessionstest.MarkedProcs
	}
	for _, id := range ids {
		for len(proc.SupervisorsOf(id)) > 0 {
			if ctx.Err() != nil {
				w.T.Errorf("session %s: its supervisors %v did not exit after the test", id, proc.SupervisorsOf(id))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if pids := leftovers(id); len(pids) > 0 {
			w.T.Errorf("session %s left processes alive: %v", id, pids)
			for _, p := range pids {
				syscall.Kill(p, syscall.SIGKILL)
			}
		}
	}
}

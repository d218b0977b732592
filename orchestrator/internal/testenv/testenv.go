// Package testenv gives the orchestrator's tests a real world to run in: a
// zwarm binary to supervise workers, a scripted fake agent standing in for
// codex, and a state dir whose config points at it. Only the agent is fake:
// supervisors, turn files and process control are zwarm's own.
package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/adapters/replay"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/testbin"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/supervisor"
)

// Bins are the binaries the tests run.
type Bins struct {
	Zwarm, FakeAgent string
	dir              string
}

// Main is the TestMain of a package whose tests run workers. The test
// binary serves the commands of zwarm that the session manager runs, and
// the fake agent (testbin), so nothing is built. Main sets *bins for the
// tests, runs them, removes the links and exits.
func Main(m *testing.M, bins **Bins) {
	testbin.Serve(map[string]testbin.Program{"zwarm": zwarm, "fakeagent": fakeagent.Main})
	b, err := links()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bins = b
	// The person's own config.toml is none, never that of whoever runs
	// the tests.
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(b.dir, "user-config"))
	code := m.Run()
	b.close()
	os.Exit(code)
}

// links makes the links to the test binary that run zwarm and the fake
// agent.
func links() (*Bins, error) {
	dir, err := os.MkdirTemp("", "zwarm-orch-bin")
	if err != nil {
		return nil, err
	}
	b := &Bins{dir: dir}
	if b.Zwarm, err = testbin.Link(dir, "zwarm"); err == nil {
		b.FakeAgent, err = testbin.Link(dir, "fakeagent")
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// The codex binary is the one config.toml names, in each world.
	os.Unsetenv("ZWARM_CODEX_BIN")
	if err := ownHome(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := ownGit(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return b, nil
}

// ownGit keeps the user's git config out of every git that the tests, the
// supervisors and the landings run: a global config of the tests' own
// (with a user, for the tests' commits), no system config, and worktrees
// made under dir (XDG_DATA_HOME), each under a name of its repository's.
// It is set once for the binary, not per test, so that tests with a
// repository (World.Repo) may run in parallel: each has its own.
func ownGit(dir string) error {
	cfg := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o600); err != nil {
		return err
	}
	for k, v := range map[string]string{"GIT_CONFIG_GLOBAL": cfg, "GIT_CONFIG_NOSYSTEM": "1", "XDG_DATA_HOME": filepath.Join(dir, "data")} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

// ownHome gives the shells the tests start (exec_command is a login shell
// by default) a home of their own under dir, not the machine's dotfiles:
// those may run slow set-up of their own (a version manager's shims) that
// a shell killed halfway, as tests do, leaves locked for every later shell
// on the machine.
func ownHome(dir string) error {
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return err
	}
	return os.Setenv("HOME", home)
}

// HomeMain is the TestMain of a package whose tests start shells but no
// workers: they get a home of their own (ownHome).
func HomeMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zwarm-shell-home")
	if err == nil {
		err = ownHome(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// zwarm is the zwarm the session manager runs: `zwarm __supervise` and the
// replay adapter's player, `zwarm __replay`.
func zwarm(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "__supervise":
			return supervise(args[1:])
		case adapters.ReplayCommand:
			return play(args[1:])
		}
	}
	fmt.Fprintf(os.Stderr, "zwarm (a test binary): no command %q here\n", args)
	return 2
}

// play is `zwarm __replay [--speed N] -- RECORDING THREAD PROMPT`.
func play(args []string) int {
	fs := flag.NewFlagSet(adapters.ReplayCommand, flag.ContinueOnError)
	speed := fs.Float64("speed", 1, "pacing factor")
	if err := fs.Parse(args); err != nil || fs.NArg() != 3 {
		fmt.Fprintf(os.Stderr, "zwarm: %s takes a recording, a thread id and a prompt: %q\n", adapters.ReplayCommand, args)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := replay.Play(ctx, os.Stdout, fs.Arg(0), *speed, fs.Arg(1), fs.Arg(2))
	if err != nil {
		fmt.Fprintln(os.Stderr, "zwarm:", err)
		return 1
	}
	return code
}

// supervise is `[--state-dir DIR] [--detach] ID` of `zwarm __supervise`,
// as the zwarm command runs it, with the built-in adapters: with --detach
// it starts the supervisor in a session of its own and exits.
func supervise(args []string) int {
	var stateDir, id string
	detach := false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--state-dir" && i+1 < len(args):
			i++
			stateDir = args[i]
		case a == "--detach":
			detach = true
		default:
			id = a
		}
	}
	err := func() error {
		st, err := state.NewStore(stateDir)
		if err != nil {
			return err
		}
		if detach {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			return sessions.StartDetached(st, id, []string{exe, "__supervise", "--state-dir", st.Dir(), id}, os.Stdout)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return supervisor.Supervise(ctx, supervisor.Options{Store: st, Adapters: adapters.Builtin()}, id)
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zwarm:", err)
		return 1
	}
	return 0
}

// close removes the links.
func (b *Bins) close() { os.RemoveAll(b.dir) }

// World is one test's state dir, working dir and agent script.
type World struct {
	T       testing.TB
	Bins    *Bins
	State   string
	Work    string
	Manager *sessions.Manager
	script  string
	steps   map[string][]Step
}

// Step is one step of the fake agent (see sessions/sessionstest/fakeagent).
type Step map[string]any

// Out prints a line.
func Out(line string) Step { return Step{"out": line} }

// WaitFile blocks the agent until path exists.
func WaitFile(path string) Step { return Step{"wait_file": path} }

// Completes is a codex turn that says msg and reports usage (codex's
// cumulative total for the thread).
func Completes(msg string, cumulativeInput int) []Step {
	m, _ := json.Marshal(msg)
	return []Step{
		Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		Out(`{"type":"turn.started"}`),
		Out(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":` + string(m) + `}}`),
		Out(fmt.Sprintf(`{"type":"turn.completed","usage":{"input_tokens":%d,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}`, cumulativeInput)),
	}
}

// Run is a step that runs a shell command in the agent's working dir to
// its end: the work an agent does (in a worktree, its edits there).
func Run(shell string) Step { return Step{"run": shell} }

// ChangesFile is a codex step reporting a file change.
func ChangesFile(path string) Step {
	return Out(`{"type":"item.completed","item":{"id":"item_9","type":"file_change","changes":[{"path":"` + path + `","kind":"add"}],"status":"completed"}}`)
}

// New makes a world whose codex workers run the fake agent, with config
// written as extraConfig adds to it.
func New(t testing.TB, b *Bins, extraConfig string) *World {
	t.Helper()
	root := t.TempDir()
	w := &World{T: t, Bins: b, State: filepath.Join(root, "state"), Work: filepath.Join(root, "work"),
		script: filepath.Join(root, "script.json"), steps: map[string][]Step{}}
	for _, d := range []string{w.State, w.Work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	wrapper := filepath.Join(root, "codex")
	body := fmt.Sprintf("#!/bin/sh\nFAKEAGENT_SCRIPT=%s exec %s \"$@\"\n", shellQuote(w.script), shellQuote(b.FakeAgent))
	if err := os.WriteFile(wrapper, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("kill_grace = \"1s\"\n%s\n[adapters.codex]\nbinary = %q\nmodel = \"gpt-5.1-codex-mini\"\n", extraConfig, wrapper)
	if err := os.WriteFile(filepath.Join(w.State, config.File), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	w.Script(nil)
	st, err := state.NewStore(w.State)
	if err != nil {
		t.Fatal(err)
	}
	w.Manager = sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin(),
		SupervisorArgv: []string{b.Zwarm, "__supervise"}})
	t.Cleanup(w.cleanup)
	return w
}

// Repo makes the world's working dir a git repository on branch main with
// one commit of files. The user's git config is kept out (ownGit).
func (w *World) Repo(files map[string]string) {
	w.T.Helper()
	w.Git("init", "-q", "-b", "main")
	for name, body := range files {
		path := filepath.Join(w.Work, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			w.T.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			w.T.Fatal(err)
		}
	}
	w.Git("add", "-A")
	w.Git("commit", "-q", "-m", "init")
}

// Git runs git in the working dir and returns its output, trimmed; a
// failure fails the test.
func (w *World) Git(args ...string) string {
	w.T.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = w.Work
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.T.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Script sets what the fake agent does for a prompt ("" is the default:
// complete at once saying "done").
func (w *World) Script(byPrompt map[string][]Step) {
	w.T.Helper()
	for k, v := range byPrompt {
		w.steps[k] = v
	}
	def := w.steps[""]
	if def == nil {
		def = Completes("done", 100)
	}
	by := map[string][]Step{}
	for k, v := range w.steps {
		if k != "" {
			by[k] = v
		}
	}
	b, _ := json.Marshal(map[string]any{"default": def, "by_prompt": by})
	if err := os.WriteFile(w.script, b, 0o600); err != nil {
		w.T.Fatal(err)
	}
}

// cleanup kills what a test left running and fails it if any process of
// its sessions survives.
func (w *World) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, _ := w.Manager.List(ctx, listing.Options{})
	for _, s := range list {
		if !s.Settled() {
			w.Manager.Kill(ctx, s.ID)
		}
	}
	for _, s := range list {
		if pids := sessionstest.MarkedProcs(s.ID); len(pids) > 0 {
			w.T.Errorf("session %s left processes alive: %v", s.ID, pids)
			for _, p := range pids {
				syscall.Kill(p, syscall.SIGKILL)
			}
		}
		// A supervisor whose session has settled may still be closing its
		// log and cgroup, and one started for a follow-up may still be
		// waiting for the session's last one to hand over: the test's dirs
		// go once they have (TempDir's removal fails on a file they write).
		for deadline := time.Now().Add(time.Minute); len(supervisorsOf(s.ID)) > 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				w.T.Errorf("session %s: its supervisors %v did not exit within a minute of the test's end", s.ID, supervisorsOf(s.ID))
				break
			}
		}
	}
}

// supervisorsOf lists the live supervisors of session id: __supervise
// processes whose command line names it.
func supervisorsOf(id string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(b, []byte("\x00__supervise\x00")) || !bytes.Contains(b, []byte(id)) {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := bytes.LastIndexByte(st, ')'); err == nil && i > 0 && i+2 < len(st) && st[i+2] != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

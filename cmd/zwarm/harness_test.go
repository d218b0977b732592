package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/testbin"
	"github.com/zwarm/zwarm/sessions/sessionstest/testworld"
	"github.com/zwarm/zwarm/sessions/watch"
)

// bins holds zwarm and the fake agent: supervision is tested through real
// processes, as users run them. Both are this test binary (testbin), run
// through links named zwarm and codex: nothing is built. quickWaits is
// zwarm whose mcp server lets a wait be as short as a second.
var bins struct{ zwarm, quickWaits, fake string }

func TestMain(m *testing.M) {
	testbin.Serve(map[string]testbin.Program{"zwarm": peakReported(runMain), "codex": fakeagent.Main,
		"zwarm-quick-waits": func(args []string) int { mcpMinWait = time.Second; return runMain(args) }})
	dir, err := os.MkdirTemp("", "zwarm-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if bins.zwarm, err = testbin.Link(dir, "zwarm"); err == nil {
		bins.fake, err = testbin.Link(dir, "codex")
	}
	if err == nil {
		bins.quickWaits, err = testbin.Link(dir, "zwarm-quick-waits")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	waitersInParallel()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// waitersInParallel lets four parallel tests run at once where -parallel
// does not say otherwise (its default is the number of CPUs): this
// package's parallel tests mostly wait on the processes they start (a
// grace period, a tool timeout, an agent's turn), not on a CPU.
func waitersInParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if n, _ := strconv.Atoi(flag.Lookup("test.parallel").Value.String()); !set && n < 4 {
		flag.Set("test.parallel", "4")
	}
}

// world is a testworld whose commands are run as a person runs them:
// the zwarm binary (or, where it makes no difference, run in this
// process), with codex played by the fake agent.
type world struct {
	*testworld.World
	t        *testing.T
	extraEnv []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t}
	w.World = testworld.New(t, testworld.Options{
		Stop: func(context.Context, *testworld.World) { w.zwarm("kill", "--all") }})
	w.setScript(fakeagent.Completes("done", 700))
	return w
}

// setScript sets what the fake agent does: def, then pairs of a prompt
// and its steps.
func (w *world) setScript(def []fakeagent.Step, byPrompt ...any) {
	w.t.Helper()
	sc := fakeagent.Script{Default: def, ByPrompt: map[string][]fakeagent.Step{}}
	for i := 0; i+1 < len(byPrompt); i += 2 {
		sc.ByPrompt[byPrompt[i].(string)] = byPrompt[i+1].([]fakeagent.Step)
	}
	w.SetScript(sc)
}

func (w *world) env() []string {
	// The person's own config is the world's (none, unless a test writes
	// one), never that of whoever runs the tests.
	env := append(append(os.Environ(), "ZWARM_STATE_DIR="+w.State, "ZWARM_CODEX_BIN="+bins.fake,
		"XDG_CONFIG_HOME="+w.userConfigHome()), w.AgentEnv()...)
	return append(env, w.extraEnv...)
}

// userConfigHome is the world's XDG_CONFIG_HOME: the person's own
// config.toml is zwarm/config.toml under it.
func (w *world) userConfigHome() string { return filepath.Join(w.Dir, "user-config") }

type result struct {
	stdout, stderr string
	code           int
}

// zwarm runs zwarm in the working dir and returns what it printed: in
// this process when it can (inProcess), else the binary.
func (w *world) zwarm(args ...string) result {
	w.t.Helper()
	if w.inProcess(args) {
		return w.inproc(args...)
	}
	return w.bin(args...)
}

// bin runs the binary in the working dir, whatever the command.
func (w *world) bin(args ...string) result {
	w.t.Helper()
	return w.exec(w.Work, w.env(), args)
}

// exec runs the binary in dir with env.
func (w *world) exec(dir string, env, args []string) result {
	w.t.Helper()
	cmd := exec.Command(bins.zwarm, args...)
	cmd.Dir, cmd.Env = dir, env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("run zwarm %v: %v", args, err)
	}
	return result{o.String(), e.String(), code}
}

// inProcess says a command line can run in this process as the binary
// would run it: a command that reads the state dir, or changes it without
// starting anything (ls, show, logs without -f, runs but runs kill, rm),
// for a world whose commands need no environment of their own but the
// state dir (no git settings); those commands do not read the working
// dir. Everything that starts, stops or waits for processes, and
// everything on a terminal, runs the binary.
func (w *world) inProcess(args []string) bool {
	if len(args) == 0 || len(w.extraEnv) > 0 {
		return false
	}
	for _, a := range args[1:] {
		if a == "-f" || a == "--follow" || a == "kill" || a == "--force" {
			return false
		}
	}
	switch args[0] {
	case "ls", "list", "show", "logs", "runs", "rm":
		return true
	}
	return false
}

// inproc runs a command line in this process, on streams as the binary
// gets them from a test (stdin empty, stdout and stderr piped), over the
// world's state dir: the flag stands for the world's $ZWARM_STATE_DIR (a
// --state-dir in args still wins, as it does over the variable).
func (w *world) inproc(args ...string) result {
	w.t.Helper()
	io, _, o, e := newTestStreams()
	io.Width = cli.TermWidth() // what a piped zwarm takes: $COLUMNS, else 80
	code := run(context.Background(), append([]string{"--state-dir", w.State}, args...), io)
	return result{o.String(), e.String(), code}
}

// here runs a command line in this process with the world's environment
// and working dir, as the binary would run: for a command that reads
// them (doctor). They are set for the rest of the test (t.Setenv,
// t.Chdir), which therefore cannot be parallel.
func (w *world) here(args ...string) result {
	w.t.Helper()
	for _, kv := range w.env()[len(os.Environ()):] {
		k, v, _ := strings.Cut(kv, "=")
		w.t.Setenv(k, v)
	}
	w.t.Chdir(w.Work)
	io, _, o, e := newTestStreams()
	io.Width = cli.TermWidth()
	code := run(context.Background(), args, io)
	return result{o.String(), e.String(), code}
}

// zwarmIn runs the binary in dir without ZWARM_STATE_DIR, so the state dir
// is found as a user's would be, with env added.
func (w *world) zwarmIn(dir string, env []string, args ...string) result {
	w.t.Helper()
	var all []string
	for _, e := range w.env() {
		if !strings.HasPrefix(e, "ZWARM_STATE_DIR=") {
			all = append(all, e)
		}
	}
	return w.exec(dir, append(all, env...), args)
}

// ok runs zwarm and fails the test unless it exits 0.
func (w *world) ok(args ...string) string {
	w.t.Helper()
	r := w.zwarm(args...)
	if r.code != 0 {
		w.t.Fatalf("zwarm %v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func (w *world) spawn(task string, flags ...string) string {
	w.t.Helper()
	return strings.TrimSpace(w.ok(append(append([]string{"spawn"}, flags...), "--", task)...))
}

// session is a session object as the JSON output gives it.
type session struct {
	record.Session
	// The worktree fields --json prints (the record keeps them in
	// Workspace, which --json does not print).
	Worktree    string              `json:"worktree"`
	Branch      string              `json:"branch"`
	Base        string              `json:"base"`
	BaseCommit  string              `json:"base_commit"`
	ChangesText string              `json:"changes_text"`
	Messages    []watch.Message     `json:"messages"`
	Steps       []fakeagent.Step    `json:"steps"`
	Inbox       []record.InboxEntry `json:"inbox"`
	Attached    []record.AttachSpan `json:"attached"`
}

func (w *world) show(id string) *session {
	w.t.Helper()
	var s session
	if err := json.Unmarshal([]byte(w.ok("show", "--json", id)), &s); err != nil {
		w.t.Fatal(err)
	}
	return &s
}

// record is a session's meta.json as the supervisor wrote it, with the
// bookkeeping --json leaves out (owner, agent).
func (w *world) record(id string) record.Session {
	w.t.Helper()
	var s record.Session
	data, err := os.ReadFile(filepath.Join(w.State, "sessions", id, "meta.json"))
	if err != nil {
		return s
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return record.Session{}
	}
	return s
}

func (w *world) ls(args ...string) []session {
	w.t.Helper()
	var list []session
	if err := json.Unmarshal([]byte(w.ok(append([]string{"ls", "--json"}, args...)...)), &list); err != nil {
		w.t.Fatal(err)
	}
	return list
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	sessionstest.Eventually(t, "pid file "+path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || len(b) == 0 {
			return false
		}
		pid, err = strconv.Atoi(string(b))
		return err == nil
	})
	return pid
}

var jsonUnmarshal = json.Unmarshal

// gitEnv gives the world's commands (git, zwarm and the workers) a git of
// their own: no user or system config but an identity, and worktrees made
// under the test's own data dir.
func (w *world) gitEnv() {
	w.t.Helper()
	env, err := testworld.GitEnv(w.t.TempDir())
	if err != nil {
		w.t.Fatal(err)
	}
	w.extraEnv = append(w.extraEnv, env...)
}

// git runs git in dir with the world's environment and returns its output.
func (w *world) git(dir string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, w.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

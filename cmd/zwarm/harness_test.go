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
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/testbin"
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

// world is one test's state dir, working dir and fake agent script.
type world struct {
	t        *testing.T
	state    string
	work     string
	script   string
	argsLog  string
	extraEnv []string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, state: filepath.Join(root, "state"), work: filepath.Join(root, "work"),
		script: filepath.Join(root, "script.json"), argsLog: filepath.Join(root, "args.log")}
	if err := os.MkdirAll(w.work, 0o700); err != nil {
		t.Fatal(err)
	}
	w.setScript(completes("done", 700))
	t.Cleanup(w.cleanup)
	return w
}

// cleanup stops whatever a test left running and fails it if any process
// of its sessions survives.
func (w *world) cleanup() {
	w.zwarm("kill", "--all")
	for _, id := range w.ids() {
		if pids := sessionstest.MarkedProcs(id); len(pids) > 0 {
			w.t.Errorf("session %s left processes alive: %v", id, pids)
			for _, p := range pids {
				syscall.Kill(p, syscall.SIGKILL)
			}
		}
		// A supervisor whose session has settled may still be closing
		// its log and cgroup: the test's dirs go once it has.
		for deadline := time.Now().Add(15 * time.Second); len(supervisorsOf(id)) > 0 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// supervisorsOf lists the live supervisors of session id: zwarm
// __supervise processes whose command line names it.
func supervisorsOf(id string) []int {
	ents, _ := os.ReadDir("/proc")
	var found []int
	parent := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte("\x00__supervise\x00")) && bytes.Contains(b, []byte(id)) && sessionstest.Alive(pid) {
			found = append(found, pid)
			parent[pid] = ppidOf(pid)
		}
	}
	// A supervisor's child between its fork and its exec (an agent or a
	// git being started) still has the supervisor's command line: it is
	// not a second supervisor, which would be nobody's child (detached).
	var out []int
	for _, pid := range found {
		if _, child := parent[parent[pid]]; !child {
			out = append(out, pid)
		}
	}
	return out
}

// ppidOf is a process's parent, 0 if it cannot be read.
func ppidOf(pid int) int {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(st, ')')
	if err != nil || i < 0 {
		return 0
	}
	f := strings.Fields(string(st[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

func (w *world) ids() []string {
	ents, _ := os.ReadDir(filepath.Join(w.state, "sessions"))
	var out []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// script is what the fake agent does, by prompt.
type script struct {
	Default  []step            `json:"default"`
	ByPrompt map[string][]step `json:"by_prompt,omitempty"`
}

type step map[string]any

func out(line string) step { return step{"out": line} }

// completes is a turn that reports a thread, a message and cumulative usage.
func completes(msg string, cumulativeInput int) []step {
	return []step{
		out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		out(`{"type":"turn.started"}`),
		out(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"` + msg + `"}}`),
		out(fmt.Sprintf(`{"type":"turn.completed","usage":{"input_tokens":%d,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}`, cumulativeInput)),
	}
}

func (w *world) setScript(def []step, byPrompt ...any) {
	sc := script{Default: def, ByPrompt: map[string][]step{}}
	for i := 0; i+1 < len(byPrompt); i += 2 {
		sc.ByPrompt[byPrompt[i].(string)] = byPrompt[i+1].([]step)
	}
	b, _ := json.Marshal(sc)
	if err := os.WriteFile(w.script, b, 0o600); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) env() []string {
	// The person's own config is the world's (none, unless a test writes
	// one), never that of whoever runs the tests.
	env := append(os.Environ(), "ZWARM_STATE_DIR="+w.state, "ZWARM_CODEX_BIN="+bins.fake,
		"FAKEAGENT_SCRIPT="+w.script, "FAKEAGENT_ARGS_LOG="+w.argsLog, "XDG_CONFIG_HOME="+w.userConfigHome())
	return append(env, w.extraEnv...)
}

// userConfigHome is the world's XDG_CONFIG_HOME: the person's own
// config.toml is zwarm/config.toml under it.
func (w *world) userConfigHome() string { return filepath.Join(filepath.Dir(w.state), "user-config") }

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
	return w.exec(w.work, w.env(), args)
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
	code := run(context.Background(), append([]string{"--state-dir", w.state}, args...), io)
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
	w.t.Chdir(w.work)
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
	Steps       []step              `json:"steps"`
	Inbox       []record.InboxEntry `json:"inbox"`
	Attached    []record.AttachSpan `json:"attached"`
}

func (w *world) show(id string) session {
	w.t.Helper()
	var s session
	if err := json.Unmarshal([]byte(w.ok("show", "--json", id)), &s); err != nil {
		w.t.Fatal(err)
	}
	return s
}

// record is a session's meta.json as the supervisor wrote it, with the
// bookkeeping --json leaves out (owner, agent).
func (w *world) record(id string) record.Session {
	w.t.Helper()
	var s record.Session
	data, err := os.ReadFile(filepath.Join(w.state, "sessions", id, "meta.json"))
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

// argsLog is every fake agent invocation: its argv and working dir.
type invocation struct {
	Argv   []string `json:"argv"`
	Cwd    string   `json:"cwd"`
	Prompt string   `json:"prompt"`
}

func (w *world) invocations() []invocation {
	w.t.Helper()
	data, _ := os.ReadFile(w.argsLog)
	var out []invocation
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var inv invocation
		if err := json.Unmarshal(l, &inv); err != nil {
			w.t.Fatal(err)
		}
		out = append(out, inv)
	}
	return out
}

var jsonUnmarshal = json.Unmarshal

// gitEnv gives the world's commands (git, zwarm and the workers) a git of
// their own: no user or system config but an identity, and worktrees made
// under the test's own data dir.
func (w *world) gitEnv() {
	w.t.Helper()
	home := w.t.TempDir()
	cfg := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o600); err != nil {
		w.t.Fatal(err)
	}
	w.extraEnv = append(w.extraEnv, "GIT_CONFIG_GLOBAL="+cfg, "GIT_CONFIG_NOSYSTEM=1", "XDG_DATA_HOME="+filepath.Join(home, "data"))
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

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

func TestSpawnTaskFromFileOrStdin(t *testing.T) {
	w := newWorld(t)
	task := filepath.Join(t.TempDir(), "task.md")
	writeFile(t, task, "# Task\n\nfix the flaky test\n")
	w.ok("spawn", "--wait", "-f", task)
	for _, args := range [][]string{{"-"}, {"-f", "-"}} {
		cmd := exec.Command(bins.zwarm, append([]string{"spawn", "--wait"}, args...)...)
		cmd.Dir, cmd.Env, cmd.Stdin = w.Work, w.env(), strings.NewReader("from stdin\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("spawn %q: %v\n%s", args, err, out)
		}
	}
	inv := w.Invocations()
	if len(inv) != 3 || inv[0].Prompt != "# Task\n\nfix the flaky test" || inv[1].Prompt != "from stdin" || inv[2].Prompt != "from stdin" {
		t.Fatalf("prompts: %+v", inv)
	}
	if r := w.zwarm("spawn", "-f", task, "also words"); r.code != 2 || !strings.Contains(r.stderr, "not both") {
		t.Fatalf("-f with words: %+v", r)
	}
	if r := w.zwarm("spawn", "-f", "/no/such/file"); r.code != 2 || !strings.Contains(r.stderr, "/no/such/file") {
		t.Fatalf("-f missing: %+v", r)
	}
}

// inject ID - reads the follow-up from stdin, as spawn - reads a task: it
// sent the agent a lone "-".
func TestInjectMessageFromStdin(t *testing.T) {
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "first"))[0]
	cmd := exec.Command(bins.zwarm, "inject", "--wait", id, "-")
	cmd.Dir, cmd.Env, cmd.Stdin = w.Work, w.env(), strings.NewReader("diff --git a/x b/x\n+more\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("inject -: %v\n%s", err, out)
	}
	if s := w.record(id); len(s.Turns) != 2 || s.Turns[1].Prompt != "diff --git a/x b/x\n+more" {
		t.Fatalf("turn 2: %+v", s.Turns[len(s.Turns)-1].Prompt)
	}
}

// --json prints the documented fields only; --jq filters them as gh does.
func TestJSONHasDocumentedFieldsAndJQ(t *testing.T) {
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "task one"))[0]
	var doc map[string]any
	mustJSON(t, w.ok("show", "--json", id), &doc)
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := "accounting adapter attached base base_commit branch changes changes_text conflict cost_usd created_at denied earlier_landings ended_at error exit_code id inbox instructions isolation job_id job_resources landed " +
		"last_event_at last_message max_cost_usd messages model pending_injects pid reasoning_effort role runner runner_state settled source status steps task thread_id turn turns updated_at usage working_dir worktree"
	if strings.Join(keys, " ") != want {
		t.Fatalf("show --json fields:\n%s\nwant\n%s", strings.Join(keys, " "), want)
	}
	if doc["runner"] != "local" || doc["job_id"] != "" || doc["runner_state"] != "" {
		t.Errorf("a local session's runner %v, job_id %v, runner_state %v", doc["runner"], doc["job_id"], doc["runner_state"])
	}
	turn := doc["turns"].([]any)[0].(map[string]any)
	for _, internal := range []string{"offset", "thread_usage", "agent_error", "inbox_id", "process_cost"} {
		if _, ok := turn[internal]; ok {
			t.Errorf("turns[].%s is internal", internal)
		}
	}
	if out := w.ok("ls", "--jq", ".[].id"); out != id+"\n" {
		t.Fatalf("ls --jq: %q", out)
	}
	if out := w.ok("show", id, "--jq", "{status, tokens: .usage.total_tokens}"); out != `{"status":"completed","tokens":710}`+"\n" {
		t.Fatalf("show --jq: %q", out)
	}
}

func TestCompletion(t *testing.T) {
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "describe the flags"))[0]
	out := w.ok("__complete", "show", "")
	if !strings.Contains(out, id[:8]+"\tcompleted: describe the flags") {
		t.Fatalf("ids: %q", out)
	}
	if out := w.ok("__complete", "kill", ""); strings.Contains(out, id[:8]) {
		t.Fatalf("kill offers a settled session: %q", out)
	}
	out = w.ok("__complete", "spawn", "--adapter", "")
	if !strings.Contains(out, "claude\n") || !strings.Contains(out, "codex\n") || strings.Contains(out, "replay") {
		t.Fatalf("adapters: %q", out)
	}
	if out := w.ok("__complete", "ls", "--status", ""); !strings.Contains(out, "running\n") || !strings.Contains(out, "killed\n") {
		t.Fatalf("statuses: %q", out)
	}
	if out := w.ok("__complete", "spawn", "--sandbox", ""); !strings.Contains(out, "workspace-write\t") {
		t.Fatalf("sandboxes: %q", out)
	}
	if out := w.ok("spawn", "--help"); strings.Contains(out, "replay") {
		t.Fatalf("spawn --help offers the internal replay adapter:\n%s", out)
	}
}

func TestLsFilters(t *testing.T) {
	w := newWorld(t)
	a := strings.Fields(w.ok("spawn", "--wait", "-m", "gpt-5.1-codex", "alpha task"))[0]
	b := strings.Fields(w.ok("spawn", "--wait", "-m", "gpt-5.1-codex-mini", "beta task"))[0]
	c := strings.Fields(w.ok("spawn", "--wait", "--source", "run:9c1d2e3f", "gamma task"))[0]
	ids := func(args ...string) string {
		var got []string
		for _, s := range w.ls(args...) {
			got = append(got, s.ID)
		}
		return strings.Join(got, " ")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "gpt-5.1-codex"}, a},
		{[]string{"--adapter", "codex", "--model", "GPT-5.1-CODEX-MINI"}, c + " " + b},
		{[]string{"--source", "run:9c1d"}, c},
		{[]string{"--source", "user"}, b + " " + a},
		{[]string{"beta"}, b},
		{[]string{"--limit", "1"}, c},
		{[]string{"--adapter", "claude"}, ""},
	} {
		if got := ids(tc.args...); got != tc.want {
			t.Errorf("ls %q: %q, want %q", tc.args, got, tc.want)
		}
	}
	if r := w.zwarm("ls", "--adapter", "claude"); !strings.Contains(r.stderr, "no sessions match (3 sessions in all") || strings.Contains(r.stderr, "no adapter") {
		t.Errorf("empty filtered ls: %+v", r)
	}
	// A mistyped adapter is named as such (it used to read as if no
	// session of a real adapter existed).
	if r := w.zwarm("ls", "--adapter", "codx"); r.code != 0 || !strings.Contains(r.stderr, `no adapter is named "codx" (known: claude, codex)`) {
		t.Errorf("ls --adapter codx: %+v", r)
	}
}

func TestMessagesReadRight(t *testing.T) {
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(fakeagent.Completes("done", 5), "hang", []fakeagent.Step{{"wait_file": gate}})
	defer touch(t, gate)
	done := strings.Fields(w.ok("spawn", "--wait", "quick"))[0]
	running := w.spawn("hang")
	sessionstest.Eventually(t, "the agent to run", func() bool { return w.record(running).Agent != nil })
	for _, c := range []struct {
		args []string
		want string
		not  string
	}{
		{[]string{"spawn"}, "zwarm: spawn needs a task", "zwarm zwarm"},
		{[]string{"rm", running}, "it is running; kill it first, or pass --force", "(running)"},
		{[]string{"kill", done}, "not running: it completed", "(it is"},
		{[]string{"show", "abcdef"}, "no such session", ""},
	} {
		r := w.zwarm(c.args...)
		if !strings.Contains(r.stderr, c.want) || c.not != "" && strings.Contains(r.stderr, c.not) {
			t.Errorf("zwarm %q: %q; want %q", c.args, r.stderr, c.want)
		}
	}
	// "just now", or on a busy machine a second or two later "2s ago".
	if out := w.ok("show", done); !strings.Contains(out, "1 turn ·") || !strings.Contains(out, "source   user") ||
		!regexp.MustCompile(`started  (just now|\d+s ago) \(`).MatchString(out) || !strings.Contains(out, " UTC)") {
		t.Errorf("show:\n%s", out)
	}
	w.ok("kill", running)
	if r := w.zwarm("kill", "--all"); r.code != 0 || !strings.Contains(r.stderr, "no running sessions to kill") {
		t.Errorf("kill --all with none: %+v", r)
	}
}

// A listing shows what it can read and names what it cannot; kill stops an
// unreadable session's processes anyway, and rm --force removes it.
func TestUnreadableRecords(t *testing.T) {
	w := newWorld(t)
	good := strings.Fields(w.ok("spawn", "--wait", "fine"))[0]
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(nil, "hang", []fakeagent.Step{{"wait_file": gate}})
	broken := w.spawn("hang")
	sessionstest.Eventually(t, "the agent to run", func() bool { return w.record(broken).Agent != nil })
	agentPID := w.record(broken).Agent.PID
	writeFile(t, filepath.Join(w.State, "sessions", broken, "meta.json"), "{not json")

	r := w.zwarm("ls")
	if r.code != 1 || !strings.Contains(r.stdout, good) || !strings.Contains(r.stderr, "cannot read session "+broken) {
		t.Fatalf("ls: %+v", r)
	}
	r = w.zwarm("ls", "--json")
	var list []session
	mustJSON(t, r.stdout, &list)
	if r.code != 1 || len(list) != 1 || list[0].ID != good || !strings.Contains(r.stderr, broken) {
		t.Fatalf("ls --json: %+v", r)
	}
	r = w.zwarm("kill", broken)
	if r.code != 1 || !strings.Contains(r.stderr, "rm --force") || !strings.Contains(r.stderr, "stopped its processes") {
		t.Fatalf("kill: %+v", r)
	}
	if sessionstest.Alive(agentPID) || len(sessionstest.MarkedProcs(broken)) > 0 {
		t.Fatalf("the unreadable session's agent still runs: %v", sessionstest.MarkedProcs(broken))
	}
	r = w.zwarm("rm", broken)
	if r.code != 1 || strings.Count(r.stderr, "rm --force") != 1 {
		t.Fatalf("rm: %+v; want one hint of rm --force", r)
	}
	w.ok("rm", "--force", broken)
	if r := w.zwarm("ls"); r.code != 0 || strings.Contains(r.stdout+r.stderr, broken) {
		t.Fatalf("after rm --force: %+v", r)
	}
}

// hostile is what a terminal would act on: clear the screen, retitle the
// window (ended by BEL), a carriage return, a C1 control, a bidi override.
const hostile = "x\x1b[2J\x1b]0;pwned\x07y\rz\u009b1m\u202egnp.exe"

// inert reports the first character a terminal would act on, if any.
func inert(s string) (rune, bool) {
	for _, r := range s {
		if r != '\n' && r != '\t' && unicode.IsControl(r) || r == '\u202e' {
			return r, false
		}
	}
	return 0, true
}

func TestAgentTextCannotDriveTheTerminal(t *testing.T) {
	w := newWorld(t)
	msg, _ := json.Marshal(hostile)
	line := `{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":` + string(msg) + `}}`
	w.setScript([]fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		fakeagent.Out(`{"type":"item.completed","item":{"id":"c","type":"command_execution","command":` + string(msg) + `,"aggregated_output":` + string(msg) + `,"exit_code":0,"status":"completed"}}`),
		fakeagent.Out(line),
		fakeagent.Out(`{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":0,"output_tokens":1}}`),
	})
	task := "task " + hostile
	wait := w.ok("spawn", "--wait", "--", task)
	id := strings.Fields(wait)[0]
	for name, text := range map[string]string{
		"spawn --wait": wait, "show": w.ok("show", id), "logs": w.ok("logs", id), "wait": w.ok("wait", id),
		"inject --wait": w.ok("inject", "--wait", id, "again "+hostile),
	} {
		if r, ok := inert(text); !ok || !strings.Contains(text, `\x1b[2J`) {
			t.Errorf("%s prints %U raw (or drops the text):\n%q", name, r, text)
		}
	}
	for _, cols := range []int{80, 200} {
		out, _ := w.onTerminal(cols, nil, "", "ls")
		if r, ok := inert(visible(strings.ReplaceAll(out, "\x1b[0m", ""))); !ok {
			t.Errorf("ls at %d columns prints %U raw:\n%q", cols, r, out)
		}
	}
	if piped := w.ok("ls"); !strings.Contains(piped, `task x\x1b[2J`) {
		t.Errorf("piped ls: %q", piped)
	}
	// --raw and --json are for programs: byte for byte.
	if raw := w.ok("logs", "--raw", "--turn", "1", id); !strings.Contains(raw, line+"\n") {
		t.Errorf("--raw changed the agent's output:\n%q", raw)
	}
	s := w.show(id)
	if s.Task != task || s.Messages[1].Text != hostile {
		t.Errorf("--json changed the text: %q %q", s.Task, s.Messages[1].Text)
	}
}

// logs of a finished session reads exactly as show's turns: the same
// steps, each once, with the follow-up prompts.
func TestLogsReadsLikeShow(t *testing.T) {
	w := newWorld(t)
	w.setScript([]fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		fakeagent.Out(`{"type":"turn.started"}`),
		fakeagent.Out(`{"type":"item.started","item":{"id":"p","type":"todo_list","items":[{"text":"test","completed":false},{"text":"fix","completed":false}]}}`),
		fakeagent.Out(`{"type":"item.started","item":{"id":"c","type":"command_execution","command":"go test ./...","status":"in_progress"}}`),
		fakeagent.Out(`{"type":"item.completed","item":{"id":"c","type":"command_execution","command":"go test ./...","aggregated_output":"FAIL\n","exit_code":1,"status":"failed"}}`),
		fakeagent.Out(`{"type":"item.updated","item":{"id":"p","type":"todo_list","items":[{"text":"test","completed":true},{"text":"fix","completed":false}]}}`),
		fakeagent.Out(`{"type":"item.started","item":{"id":"m","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"flags"},"status":"in_progress"}}`),
		fakeagent.Out(`{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"flags"},"result":{"content":[{"type":"text","text":"3 pages about flags"}]},"status":"completed"}}`),
		fakeagent.Out(`{"type":"item.completed","item":{"id":"p","type":"todo_list","items":[{"text":"test","completed":true},{"text":"fix","completed":true}]}}`),
		fakeagent.Out(`{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"fixed it"}}`),
		fakeagent.Out(`{"type":"turn.completed","usage":{"input_tokens":900,"cached_input_tokens":0,"output_tokens":90}}`),
	})
	id := strings.Fields(w.ok("spawn", "--wait", "fix the tests"))[0]
	w.ok("inject", "--wait", id, "now the docs")
	show, logs := w.ok("show", id), w.ok("logs", id)
	turns := show[strings.Index(show, "── turn 1"):strings.Index(show, "\nfollow-ups:")]
	if logs != turns {
		t.Fatalf("logs:\n%s\nshow's turns:\n%s", logs, turns)
	}
	for _, want := range []string{"> now the docs", "$ go test ./...  (exit 1)", "☑ fix", "→ docs.search", "← 3 pages about flags"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lacks %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "(running)") || strings.Count(logs, "$ go test") != 2 || strings.Contains(logs, "turn completed") {
		t.Errorf("logs repeats steps or shows the cumulative count:\n%s", logs)
	}
	if r := w.zwarm("logs", "--turn", "9", id); r.code != 2 || !strings.Contains(r.stderr, "has no turn 9 (it has 2)") {
		t.Errorf("logs --turn 9: %+v", r)
	}
	if r := w.zwarm("logs", "--raw", "--turn", "9", id); r.code != 2 || !strings.Contains(r.stderr, "has no turn 9 (it has 2)") {
		t.Errorf("logs --raw --turn 9: %+v", r)
	}
	if r := w.zwarm("logs", "--turn", "0", id); r.code != 2 || !strings.Contains(r.stderr, "--turn must be 1 or more") {
		t.Errorf("logs --turn 0: %+v", r)
	}
	if one := w.ok("logs", "--turn", "2", id); !strings.HasPrefix(one, "── turn 2 · follow-up ──\n  > now the docs") {
		t.Errorf("logs --turn 2:\n%s", one)
	}
}

// A turn that failed with only stderr says why at its end.
func TestLogsOfATurnThatFailedOnStderr(t *testing.T) {
	w := newWorld(t)
	w.setScript([]fakeagent.Step{{"err": "Error: unknown model gpt-9\nsee codex --help"}, {"exit": 1}})
	id := strings.Fields(w.zwarm("spawn", "--wait", "x").stdout)[0]
	logs := w.ok("logs", id)
	if !strings.Contains(logs, "── failed · exit 1") || !strings.Contains(logs, "Error: unknown model gpt-9") {
		t.Fatalf("logs:\n%s", logs)
	}
	r := w.zwarm("logs", "--raw", id)
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "printed nothing on stdout") || !strings.Contains(r.stderr, "turn_1.stderr") {
		t.Fatalf("logs --raw: %+v", r)
	}
}

func TestInjectSaysWhatHappened(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	// The stubborn agent ignores SIGTERM before it says anything, and
	// ends (so that its kill does) only once the test has looked.
	released := filepath.Join(t.TempDir(), "released")
	t.Cleanup(func() { os.WriteFile(released, nil, 0o600) })
	w.setScript(fakeagent.Completes("ok", 5), "hang", []fakeagent.Step{{"wait_file": gate}}, "stubborn", []fakeagent.Step{{"ignore_sigterm": true},
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), {"wait_file": released}})
	id := w.spawn("hang")
	sessionstest.Eventually(t, "the agent to run", func() bool { return w.record(id).Agent != nil })
	if out := w.ok("inject", id, "next"); !strings.Contains(out, "queued behind turn 1") {
		t.Fatalf("inject while running: %q", out)
	}
	touch(t, gate)
	w.ok("wait", id)
	if out := w.ok("inject", id, "more"); !strings.Contains(out, "resumed as turn 3") {
		t.Fatalf("inject after the end: %q", out)
	}
	w.ok("wait", id)

	// While a kill is in progress, a follow-up is refused plainly. The
	// kill lasts until the agent, which ignores SIGTERM, is released (the
	// grace before SIGKILL is a ceiling).
	writeFile(t, filepath.Join(w.State, "config.toml"), "kill_grace = \"60s\"\n")
	st := w.spawn("stubborn")
	sessionstest.Eventually(t, "the stubborn agent to ignore SIGTERM and start its thread", func() bool { return w.record(st).ThreadID != "" })
	kill := exec.Command(bins.zwarm, "kill", st)
	kill.Dir, kill.Env = w.Work, w.env()
	var killOut lockedBuffer
	kill.Stdout, kill.Stderr = &killOut, &killOut
	if err := kill.Start(); err != nil {
		t.Fatal(err)
	}
	sessionstest.Eventually(t, "the kill to be recorded", func() bool { return w.record(st).Stop != nil })
	r := w.zwarm("inject", st, "too late")
	if r.code != 1 || !strings.Contains(r.stderr, "being killed") {
		t.Errorf("inject during a kill: want exit 1 saying the session is being killed; exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	touch(t, released)
	if code := exitOf(t, kill, &killOut); code != 0 {
		t.Fatalf("kill: want exit 0 once the agent ended; exit %d:\n%s", code, killOut.String())
	}
}

func TestDoctor(t *testing.T) {
	w := newWorld(t)
	r := w.here("doctor")
	out := r.stdout
	if r.code != 0 {
		t.Fatalf("doctor: %+v", r)
	}
	for _, want := range []string{"state dir", w.State, "config", "containment", "codex", bins.fake, "locks        flock(2)", "✓ verify       land --verify runs confined (Landlock)"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor lacks %q:\n%s", want, out)
		}
	}
	leased := newWorld(t)
	os.MkdirAll(leased.State, 0o700)
	writeFile(t, filepath.Join(leased.State, "config.toml"), "[state]\nlocks = \"lease\"\n")
	if r := leased.here("doctor"); !strings.Contains(r.stdout, "locks        leases") {
		t.Errorf("doctor of a state dir whose locks are leases:\n%s", r.stdout)
	}
	w.extraEnv = []string{"ZWARM_CODEX_BIN=/no/such/codex"}
	if r := w.here("doctor"); r.code != 1 || !strings.Contains(r.stdout, "✗ codex") {
		t.Errorf("doctor without the default agent: %+v", r)
	}
	// Where worktrees cannot be made, and a repository without git: each
	// spawn would fail there, which doctor said nothing of (or that workers
	// work in place, which spawn never does in a repository).
	file := filepath.Join(t.TempDir(), "a-file")
	writeFile(t, file, "")
	w.extraEnv = []string{"XDG_DATA_HOME=" + filepath.Join(file, "data")}
	if r := w.here("doctor"); r.code != 1 || !strings.Contains(r.stdout, "✗ worktree dir "+filepath.Join(file, "data", "zwarm", "worktrees")+" cannot be made: "+file+" is not a directory") {
		t.Errorf("doctor with worktrees under a file: %+v", r)
	}
	os.MkdirAll(filepath.Join(w.Work, ".git"), 0o700)
	w.extraEnv = []string{"PATH=" + t.TempDir()}
	if r := w.here("doctor"); r.code != 1 || !strings.Contains(r.stdout, "✗ git          not found, and "+w.Work+" is a git repository: spawn refuses here") {
		t.Errorf("doctor without git in a repository: %+v", r)
	}
}

// A worker whose agent went silent shows for how long, at a glance.
func TestQuietWorkerShowsWhenItLastSpoke(t *testing.T) {
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript([]fakeagent.Step{fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), {"wait_file": gate}})
	defer touch(t, gate)
	id := w.spawn("stall")
	sessionstest.Eventually(t, "the first event", func() bool { return w.record(id).LastEventAt != nil })
	// Five minutes of silence, as the supervisor would have recorded it.
	path := filepath.Join(w.State, "sessions", id, "meta.json")
	s := w.record(id)
	old := time.Now().Add(-5 * time.Minute).UTC()
	s.LastEventAt = &old
	data, _ := json.Marshal(s)
	writeFile(t, path+".tmp", string(data))
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	if out, _ := w.onTerminal(120, nil, "", "ls"); !strings.Contains(out, "running, quiet 5m") {
		t.Errorf("ls:\n%s", visible(out))
	}
	if out := w.ok("show", id); !strings.Contains(out, "last event 5m ago: the agent has been quiet") {
		t.Errorf("show:\n%s", out)
	}
	if s := w.show(id); s.Status() != record.StatusRunning {
		t.Errorf("status %s", s.Status())
	}
}

// A follow-up queued behind another that resumed a settled session
// waits for that follow-up, not for the turn that has ended.
func TestInjectQueuedBehindAResumingFollowUp(t *testing.T) {
	t.Parallel()
	ended := time.Now()
	s := &record.Session{Turn: 1, Turns: []record.Turn{{N: 1, EndedAt: &ended}}}
	got := injectOutcome(&sessions.InjectResult{Outcome: sessions.InjectQueued, Turn: 1, Ahead: 1, Session: s})
	if got != "queued after 1 earlier follow-up: the agent's thread takes them in order" {
		t.Fatalf("queued behind a resuming follow-up: %q", got)
	}
	// An interrupt there has no turn to stop, and goes first (it was said
	// to wait for turn 1, which had ended).
	interrupt := &sessions.InjectResult{Outcome: sessions.InjectQueued, Turn: 1, Session: s, Entry: record.InboxEntry{Interrupt: true}}
	if got := injectOutcome(interrupt); got != "queued to run next, before the follow-ups sent without --interrupt: no turn is running to stop" {
		t.Fatalf("an interrupt queued behind a resuming follow-up: %q", got)
	}
	s.Turns[0].EndedAt = nil
	if got := injectOutcome(&sessions.InjectResult{Outcome: sessions.InjectQueued, Turn: 1, Ahead: 1, Session: s}); !strings.HasPrefix(got, "queued behind turn 1") {
		t.Fatalf("queued behind a running turn: %q", got)
	}
}

// inject --json says what became of the message, which the session alone
// does not: resumed as turn 2, and, with --wait, delivered as it.
func TestInjectJSONSaysWhatBecameOfTheFollowUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "task one"))[0]
	type followUp struct {
		ID      string `json:"id"`
		Outcome string `json:"outcome"`
		Turn    int    `json:"turn"`
		Ahead   int    `json:"ahead"`
		State   string `json:"state"`
	}
	var doc struct {
		ID       string    `json:"id"`
		FollowUp *followUp `json:"follow_up"`
	}
	mustJSON(t, w.ok("inject", "--json", id, "go on"), &doc)
	if f := doc.FollowUp; doc.ID != id || f == nil || f.ID == "" || f.Outcome != "resumed" || f.Turn != 2 {
		t.Fatalf("inject --json: %+v %+v", doc, doc.FollowUp)
	}
	w.ok("wait", id)
	doc.FollowUp = nil
	mustJSON(t, w.ok("inject", "--wait", "--json", id, "and again"), &doc)
	if f := doc.FollowUp; f == nil || f.Outcome != "resumed" || f.Turn != 3 || f.State != "delivered" {
		t.Fatalf("inject --wait --json: %+v", doc.FollowUp)
	}
}

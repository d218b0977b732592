package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

func TestBadInputGetsClearErrors(t *testing.T) {
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "ok task"))[0]
	file := filepath.Join(t.TempDir(), "file")
	touch(t, file)
	repo := t.TempDir()
	w.Git(repo, "init", "-q")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown id", []string{"show", "abcdef"}, 2, "no such session"},
		{"slash in id", []string{"show", "../x"}, 2, "invalid session id"},
		{"dots", []string{"logs", ".."}, 2, "invalid session id"},
		{"not hex", []string{"kill", "zzzz"}, 2, "invalid session id"},
		{"empty task", []string{"spawn", "  "}, 2, "empty task"},
		{"task starting with -", []string{"spawn", "-v is broken"}, 2, `goes after --, e.g. zwarm spawn -- "-v is broken"`},
		{"message starting with -", []string{"inject", id, "-x"}, 2, `goes after --, e.g. zwarm inject ID -- "-v is broken"`},
		{"no task", []string{"spawn"}, 2, "needs a task"},
		{"missing working dir", []string{"spawn", "-C", "/no/such/dir", "x"}, 2, "does not exist"},
		{"unknown adapter", []string{"spawn", "--adapter", "nope", "x"}, 2, "unknown adapter"},
		{"bad sandbox", []string{"spawn", "--sandbox", "yolo", "x"}, 2, "sandbox"},
		{"a model that reads as an option", []string{"spawn", "--model=--help", "x"}, 2, "does not start with '-'"},
		{"state dir not writable", []string{"--state-dir", filepath.Join(file, "state"), "spawn", "x"}, 1, "state dir"},
		{"state dir a repository's top", []string{"--state-dir", repo, "spawn", "x"}, 2, "top of a git repository"},
		{"init in a repository's top", []string{"--state-dir", repo, "init"}, 2, filepath.Join(repo, ".zwarm")},
		{"kill finished", []string{"kill", id}, 1, "not running"},
		{"kill nothing", []string{"kill"}, 2, "--all"},
		{"bad status", []string{"ls", "--status", "done"}, 2, "unknown status"},
		{"bad age", []string{"clean", "--older-than", "soon"}, 2, "not an age"},
		{"empty inject", []string{"inject", id, ""}, 2, "empty message"},
		// Text that is not UTF-8 is refused, not changed to U+FFFD on its
		// way to the agent and the record.
		{"a task that is not UTF-8", []string{"spawn", "fix a\xffb"}, 2, "the task is not UTF-8 text (byte 0xff at offset 5)"},
		{"a message that is not UTF-8", []string{"inject", id, "\xfe\xff invalid"}, 2, "the message is not UTF-8 text (byte 0xfe at offset 0)"},
		{"missing turn", []string{"logs", "--raw", "--turn", "9", id}, 2, "no turn 9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := w.zwarm(c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) {
				t.Errorf("zwarm %q: exit %d stderr %q; want exit %d mentioning %q", c.args, r.code, r.stderr, c.code, c.want)
			}
		})
	}
	// Nothing above created a session or harmed the one there is, nor
	// wrote to the repository taken for a state dir.
	if entries, err := os.ReadDir(repo); err != nil || len(entries) != 1 {
		t.Errorf("the repository given as state dir holds %v (%v), want only .git", entries, err)
	}
	if list := w.ls(); len(list) != 1 || list[0].Status() != record.StatusCompleted {
		t.Fatalf("sessions after bad input: %+v", list)
	}
}

func TestTaskStartingWithDashAfterDoubleDash(t *testing.T) {
	w := newWorld(t)
	w.ok("spawn", "--wait", "--", "-v is broken")
	inv := w.Invocations()
	a := inv[0].Argv
	if a[len(a)-2] != "--" || a[len(a)-1] != "-" || inv[0].Prompt != "-v is broken" {
		t.Fatalf("agent argv %q, prompt %q", a, inv[0].Prompt)
	}
}

func TestMissingCodexBinaryIsRefusedBeforeRecording(t *testing.T) {
	w := newWorld(t)
	w.extraEnv = []string{"ZWARM_CODEX_BIN=/no/such/codex"}
	r := w.zwarm("spawn", "do it")
	if r.code != 1 || !strings.Contains(r.stderr, "/no/such/codex") || !strings.Contains(r.stderr, "npm install -g @openai/codex") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	if list := w.ls(); len(list) != 0 {
		t.Fatalf("a spawn that could not run left a record: %+v", list)
	}
}

// A follow-up that could never run is refused as spawn refuses a first
// turn, before anything is queued: a missing agent binary, a cost limit
// on a model whose price zwarm does not know.
func TestAFollowUpThatCouldNeverRunIsRefused(t *testing.T) {
	w := newWorld(t)
	if r := w.zwarm("spawn", "--model", "no-such-model", "--max-cost", "1", "x"); r.code != 2 || !strings.Contains(r.stderr, `a cost limit needs the price of model "no-such-model"`) {
		t.Fatalf("spawn --max-cost on an unknown model: %+v", r)
	}
	id := strings.Fields(w.ok("spawn", "--wait", "--model", "no-such-model", "first"))[0]
	before := w.record(id)
	r := w.zwarm("inject", "--max-cost", "1", id, "go on")
	if r.code != 2 || !strings.Contains(r.stderr, `a cost limit needs the price of model "no-such-model"`) {
		t.Fatalf("inject --max-cost on an unknown model: %+v", r)
	}
	w.extraEnv = []string{"ZWARM_CODEX_BIN=/no/such/codex"}
	r = w.zwarm("inject", id, "go on")
	if r.code != 1 || !strings.Contains(r.stderr, "/no/such/codex") {
		t.Fatalf("inject without the agent's binary: %+v", r)
	}
	w.extraEnv = nil
	long := longFollowUp()
	r = w.zwarm(append([]string{"inject", id}, long...)...)
	if r.code != 2 || !strings.Contains(r.stderr, "codex takes at most 1048576") {
		t.Fatalf("inject of a follow-up longer than codex takes: code %d, %.300s", r.code, r.stderr)
	}
	after := w.record(id)
	if after.Status() != record.StatusCompleted || len(after.Turns) != len(before.Turns) || after.MaxCostUSD != 0 || after.PendingInjects != 0 {
		t.Fatalf("a refused follow-up changed the session: %s, %d turns, limit %v, %d pending", after.Status(), len(after.Turns), after.MaxCostUSD, after.PendingInjects)
	}
}

// A follow-up for a running session is queued for its supervisor, which
// builds the turn later: one longer than the agent takes is refused now,
// not when its turn fails the session.
func TestAFollowUpTooLongForARunningWorkerIsRefused(t *testing.T) {
	t.Parallel()
	w, id := blockedWorld(t)
	sessionstest.Eventually(t, "the turn to run", func() bool { return w.show(id).Status() == record.StatusRunning })
	r := w.zwarm(append([]string{"inject", id}, longFollowUp()...)...)
	if r.code != 2 || !strings.Contains(r.stderr, "codex takes at most 1048576") {
		t.Fatalf("inject of a follow-up longer than codex takes: code %d, %.300s", r.code, r.stderr)
	}
	if s := w.record(id); s.PendingInjects != 0 || s.Status() != record.StatusRunning {
		t.Fatalf("the refused follow-up was queued: %s, %d pending", s.Status(), s.PendingInjects)
	}
}

// longFollowUp is the words of a follow-up one character longer than
// codex takes, each short enough for one argument of a command line.
func longFollowUp() []string {
	word := strings.Repeat("w", 1<<16-1)
	words := make([]string, 16) // 16 words and 15 spaces: 1<<20 characters
	for i := range words {
		words[i] = word
	}
	return append(words, "x")
}

func TestAmbiguousPrefixListsCandidates(t *testing.T) {
	w := newWorld(t)
	for _, id := range []string{"3f2a0000-0000-4000-8000-000000000001", "3f2a0000-0000-4000-8000-000000000002"} {
		writeLegacy(t, w.State, id)
	}
	r := w.zwarm("show", "3f2a")
	if r.code != 2 || !strings.Contains(r.stderr, "ambiguous") || !strings.Contains(r.stderr, "3f2a0000-0000-4000-8000-000000000002") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
}

func TestParallelSpawnsAreAllRecorded(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const n = 20
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = strings.TrimSpace(w.zwarm("spawn", "parallel task").stdout)
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range ids {
		if len(id) != 36 || seen[id] {
			t.Fatalf("bad or duplicate id %q in %q", id, ids)
		}
		seen[id] = true
	}
	var done []session
	mustJSON(t, w.ok(append([]string{"wait", "--json", "--timeout", "60s"}, ids...)...), &done)
	var total int64
	for _, s := range w.ls() {
		if s.Status() != record.StatusCompleted || s.Usage.InputTokens != 700 {
			t.Errorf("%s: %s %+v %s", s.ID, s.Status(), s.Usage, s.Error)
		}
		total += s.Usage.TotalTokens
	}
	if len(done) != n || total != n*710 {
		t.Fatalf("%d done, total tokens %d", len(done), total)
	}
}

func TestWaitAnyAndTimeout(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(fakeagent.Completes("fast", 1), "slow", append([]fakeagent.Step{{"wait_file": gate}}, fakeagent.Completes("slow", 1)...))
	slow := w.spawn("slow")
	fast := w.spawn("fast")
	var got []session
	mustJSON(t, w.ok("wait", "--any", "--json", slow, fast), &got)
	if len(got) != 2 || got[1].Status() != record.StatusCompleted {
		t.Fatalf("wait --any: %+v", got)
	}
	// A deadline that passes before the first read of the sessions still
	// names every one of them, and --json still prints them.
	for _, d := range []string{"1ns", "1us", "200ms"} {
		r := w.zwarm("wait", "--timeout", d, slow)
		if r.code != 124 || !strings.Contains(r.stderr, "timed out") || !strings.Contains(r.stderr, "still running: "+slow[:8]) {
			t.Fatalf("wait --timeout %s: want exit 124 naming %s as still running, got exit %d, stderr %q", d, slow[:8], r.code, r.stderr)
		}
		r = w.zwarm("wait", "--json", "--timeout", d, slow)
		var left []session
		if err := json.Unmarshal([]byte(r.stdout), &left); err != nil || r.code != 124 || len(left) != 1 || left[0].ID != slow || (left[0].Status() != record.StatusRunning && left[0].Status() != record.StatusPending) {
			t.Fatalf("wait --json --timeout %s: want exit 124 and [%s pending or running], got exit %d, stdout %q (%v)", d, slow[:8], r.code, r.stdout, err)
		}
	}
	// A session named twice, by its id and its prefix, is waited for once
	// and listed twice (it used to be waited for until the deadline).
	done := make(chan result, 1)
	go func() { done <- w.zwarm("wait", "--json", "--timeout", "20s", slow, slow[:8]) }()
	time.Sleep(300 * time.Millisecond) // most often, the wait watches before the session ends
	touch(t, gate)
	r := <-done
	var both []session
	if err := json.Unmarshal([]byte(r.stdout), &both); err != nil || r.code != 0 || len(both) != 2 || both[0].ID != slow || both[1].ID != slow {
		t.Fatalf("wait ID PREFIX of one session: exit %d, %d sessions listed, stderr %q (%v)", r.code, len(both), r.stderr, err)
	}
}

func TestWaitAllWaitsForWhatRunsNow(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if r := w.zwarm("wait", "--all"); r.code != 0 || !strings.Contains(r.stderr, "no session is running") {
		t.Fatalf("wait --all with nothing running: exit %d %q", r.code, r.stderr)
	}
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(fakeagent.Completes("fast", 1), "slow", append([]fakeagent.Step{{"wait_file": gate}}, fakeagent.Completes("slow", 1)...))
	done := strings.Fields(w.ok("spawn", "--wait", "quick"))[0]
	slow := w.spawn("slow")
	fast := w.spawn("fast")
	if r := w.zwarm("wait", "--all", slow); r.code != 2 {
		t.Fatalf("wait --all with an id: exit %d %q", r.code, r.stderr)
	}
	if r := w.zwarm("wait", "--all", "--timeout", "300ms"); r.code != 124 || !strings.Contains(r.stderr, slow[:8]) {
		t.Fatalf("wait --all while one is held: exit %d %q", r.code, r.stderr)
	}
	touch(t, gate)
	var got []session
	mustJSON(t, w.ok("wait", "--all", "--json"), &got)
	// What settled before is not waited for; what ran is, to the end.
	for _, s := range got {
		if s.ID == done || s.Status() != record.StatusCompleted {
			t.Fatalf("wait --all returned %+v", got)
		}
	}
	w.ok("wait", slow, fast)
}

func TestRmAndClean(t *testing.T) {
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(fakeagent.Completes("x", 1), "hang", []fakeagent.Step{{"wait_file": gate}})
	done := strings.Fields(w.ok("spawn", "--wait", "quick"))[0]
	running := w.spawn("hang")
	r := w.zwarm("rm", running)
	if r.code != 1 || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("rm running: exit %d %q", r.code, r.stderr)
	}
	w.ok("rm", "--force", running)
	if _, err := os.Stat(filepath.Join(w.State, "sessions", running)); !os.IsNotExist(err) {
		t.Fatalf("rm --force left the session: %v", err)
	}
	if r := w.zwarm("clean"); r.code != 0 || !strings.Contains(r.stderr, "nothing") {
		t.Fatalf("clean removed a fresh session: %+v", r)
	}
	// Piped, a bulk delete needs --yes; --dry-run only lists.
	if r := w.zwarm("clean", "--older-than", "0s"); r.code != 2 || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("clean without --yes: %+v", r)
	}
	if out := w.ok("clean", "--older-than", "0s", "--dry-run"); !strings.Contains(out, "would remove "+done) {
		t.Fatalf("clean --dry-run: %q", out)
	}
	if out := w.ok("clean", "--older-than", "0s", "--yes"); !strings.Contains(out, done) {
		t.Fatalf("clean --older-than 0s: %q", out)
	}
	if list := w.ls(); len(list) != 0 {
		t.Fatalf("left: %+v", list)
	}
}

func TestLogsFollowStreamsUntilTheEnd(t *testing.T) {
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(append([]fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		fakeagent.Out(`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"make test","status":"in_progress"}}`),
		{"partial": `{"type":"item.completed","item":{"id":"item_0","type":"command_execution",`},
		{"wait_file": gate},
		fakeagent.Out(`"command":"make test","aggregated_output":"ok\n","exit_code":0,"status":"completed"}}`),
	}, fakeagent.Completes("all green", 5)...))
	id := w.spawn("test it")
	cmd := exec.Command(bins.zwarm, "logs", "-f", id)
	cmd.Dir, cmd.Env = w.Work, w.env()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(want string) {
		t.Helper()
		timeout := time.After(15 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("logs -f ended before %q", want)
				}
				if strings.Contains(l, want) {
					return
				}
			case <-timeout:
				t.Fatalf("no %q from logs -f", want)
			}
		}
	}
	expect("$ make test  (running)")
	touch(t, gate)
	expect("$ make test  (exit 0)")
	expect("all green")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("logs -f did not end cleanly with the session: %v", err)
	}
}

// writeLegacy writes a session the way the Python zwarm did: messages in
// meta.json, naive timestamps, stderr mixed into the turn file.
func writeLegacy(t *testing.T, state, id string) {
	t.Helper()
	dir := filepath.Join(state, "sessions", id, "turns")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	meta := map[string]any{"id": id, "task": "legacy task", "status": "completed", "working_dir": "/w",
		"created_at": "2025-03-01T10:00:00.123456", "updated_at": "2025-03-01T10:05:00", "pid": 4242, "exit_code": nil,
		"model": "gpt-5.1-codex-mini", "turn": 1, "source": "user", "adapter": "codex", "error": nil,
		"token_usage": map[string]any{"input_tokens": 100, "output_tokens": 20},
		"messages": []map[string]any{{"role": "user", "content": "legacy task", "timestamp": "2025-03-01T10:00:00"},
			{"role": "assistant", "content": "legacy answer", "timestamp": "2025-03-01T10:05:00", "metadata": map[string]any{}}}}
	b, _ := json.Marshal(meta)
	os.WriteFile(filepath.Join(state, "sessions", id, "meta.json"), b, 0o600)
	turn := `{"type":"thread.started","thread_id":"t1"}
Reading additional input from stdin...
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"legacy answer"}}
2025-03-01T10:05:00 WARN codex_core: something on stderr
{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":20}}
`
	os.WriteFile(filepath.Join(dir, "turn_1.jsonl"), []byte(turn), 0o600)
}

func TestPythonStateDirIsReadOnly(t *testing.T) {
	w := newWorld(t)
	id := "9c1d0000-0000-4000-8000-000000000001"
	writeLegacy(t, w.State, id)
	list := w.ls()
	if len(list) != 1 || list[0].Task != "legacy task" || list[0].Status() != record.StatusCompleted || list[0].Usage.TotalTokens != 120 {
		t.Fatalf("ls: %+v", list)
	}
	if table := w.ok("ls"); !strings.Contains(table, "9c1d0000") || !strings.Contains(table, "legacy task") {
		t.Fatalf("ls table:\n%s", table)
	}
	human := w.ok("show", "9c1d")
	if !strings.Contains(human, "legacy answer") || !strings.Contains(human, "read-only") {
		t.Fatalf("show:\n%s", human)
	}
	if logs := w.ok("logs", "9c1d"); !strings.Contains(logs, "legacy answer") || !strings.Contains(logs, "WARN codex_core") {
		t.Fatalf("logs:\n%s", logs)
	}
	for _, args := range [][]string{{"inject", "9c1d", "more"}, {"rm", "9c1d"}, {"kill", "9c1d"}} {
		if r := w.zwarm(args...); r.code != 1 || !strings.Contains(r.stderr, "Python") {
			t.Errorf("%q: exit %d %q", args, r.code, r.stderr)
		}
	}
	before, _ := os.ReadFile(filepath.Join(w.State, "sessions", id, "meta.json"))
	w.ok("ls")
	after, _ := os.ReadFile(filepath.Join(w.State, "sessions", id, "meta.json"))
	if string(before) != string(after) {
		t.Fatal("reading a legacy session changed it")
	}
}

// rm --dry-run answers for its ids as rm would take them.
func TestRmDryRunChecksItsIDs(t *testing.T) {
	w := newWorld(t)
	id := strings.Fields(w.ok("spawn", "--wait", "task"))[0]
	if r := w.zwarm("rm", "--dry-run", "ffff"); r.code != 2 || r.stdout != "" {
		t.Fatalf("an unknown id: %+v", r)
	}
	if out := w.ok("rm", "--dry-run", id[:6]); out != "would remove "+id+"\n" {
		t.Fatalf("a prefix: %q", out)
	}
	if len(w.ls()) != 1 {
		t.Fatal("a dry run removed the session")
	}
}

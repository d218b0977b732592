package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

func TestSpawnWaitCompletes(t *testing.T) {
	w := newWorld(t)
	var s session
	out := w.ok("spawn", "--wait", "--json", "-m", "gpt-5.1-codex", "add a flag")
	mustJSON(t, out, &s)
	if s.Status() != record.StatusCompleted || s.ExitCode == nil || *s.ExitCode != 0 {
		t.Fatalf("status %s exit %v error %q", s.Status(), s.ExitCode, s.Error)
	}
	if s.LastMessage != "done" || s.ThreadID == "" || s.Turn != 1 || s.Usage.InputTokens != 700 || s.Usage.TotalTokens != 710 {
		t.Fatalf("summary wrong: %+v", s.Session)
	}
	if s.CostUSD == nil || *s.CostUSD <= 0 || s.EndedAt == nil || s.Model != "gpt-5.1-codex" || s.WorkingDir != w.Work {
		t.Fatalf("cost %v ended %v model %s dir %s", s.CostUSD, s.EndedAt, s.Model, s.WorkingDir)
	}
	inv := w.Invocations()
	if len(inv) != 1 || inv[0].Argv[len(inv[0].Argv)-1] != "-" || inv[0].Prompt != "add a flag" || inv[0].Cwd != w.Work {
		t.Fatalf("invocations %+v", inv)
	}
	shown := w.show(s.ID[:6])
	if len(shown.Turns) != 1 || shown.Turns[0].Usage.InputTokens != 700 || len(shown.Messages) != 2 ||
		shown.Messages[0].Role != "user" || shown.Messages[1].Text != "done" {
		t.Fatalf("show: turns %+v messages %+v", shown.Turns, shown.Messages)
	}
	// The raw turn is kept byte for byte.
	raw := w.ok("logs", "--raw", "--turn", "1", s.ID)
	if !strings.Contains(raw, `"thread_id":"`+s.ThreadID+`"`) {
		t.Fatalf("raw log: %s", raw)
	}
}

func TestSpawnReturnsWhileAgentRuns(t *testing.T) {
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(append([]fakeagent.Step{{"wait_file": gate}}, fakeagent.Completes("late", 10)...))
	id := w.spawn("slow task")
	if s := w.show(id); s.Status() != record.StatusPending && s.Status() != record.StatusRunning {
		t.Fatalf("just spawned: %s", s.Status())
	}
	sessionstest.Eventually(t, "the session to run", func() bool {
		list := w.ls("--status", "running")
		return len(list) == 1 && list[0].ID == id
	})
	if got := w.ls("--status", "completed"); len(got) != 0 {
		t.Fatalf("completed too early: %+v", got)
	}
	touch(t, gate)
	w.ok("wait", "--timeout", "60s", id)
	if s := w.show(id); s.Status() != record.StatusCompleted || s.LastMessage != "late" {
		t.Fatalf("%s %q", s.Status(), s.LastMessage)
	}
}

func TestAgentFailures(t *testing.T) {
	w := newWorld(t)
	w.setScript(nil,
		"reports failure", []fakeagent.Step{
			fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
			fakeagent.Out(`{"type":"error","message":"unexpected status 500: boom"}`),
			fakeagent.Out(`{"type":"turn.failed","error":{"message":"unexpected status 500: boom"}}`),
			{"exit": 1}},
		"crashes", []fakeagent.Step{{"err": "panic: out of cheese"}, {"exit": 3}},
		"failed but exit 0", []fakeagent.Step{fakeagent.Out(`{"type":"turn.failed","error":{"message":"quota"}}`)},
	)
	for task, want := range map[string]string{
		"reports failure": "unexpected status 500: boom", "crashes": "out of cheese", "failed but exit 0": "quota",
	} {
		r := w.zwarm("spawn", "--wait", "--json", task)
		if r.code != 1 {
			t.Errorf("%s: exit %d, want 1", task, r.code)
		}
		var s session
		mustJSON(t, r.stdout, &s)
		if s.Status() != record.StatusFailed || !strings.Contains(s.Error, want) {
			t.Errorf("%s: status %s error %q, want failed with %q", task, s.Status(), s.Error, want)
		}
	}
	if r := w.zwarm("wait", w.IDs()[0]); r.code != 1 {
		t.Errorf("wait on a failed session: exit %d", r.code)
	}
}

func TestInjectWhileRunningIsQueuedThenDeliveredInOrder(t *testing.T) {
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(fakeagent.Completes("ok", 100),
		"first", append([]fakeagent.Step{fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), {"wait_file": gate}}, fakeagent.Completes("one", 700)...),
		"second", fakeagent.Completes("two", 900),
		"third", fakeagent.Completes("three", 1100))
	id := w.spawn("first")
	sessionstest.Eventually(t, "turn 1 running", func() bool { return len(w.Invocations()) == 1 })
	for _, msg := range []string{"second", "third"} {
		if out := w.ok("inject", id, msg); !strings.Contains(out, "queued") {
			t.Fatalf("inject into a running session: %q", out)
		}
	}
	if s := w.show(id); s.PendingInjects != 2 || s.Status() != record.StatusRunning {
		t.Fatalf("pending %d status %s", s.PendingInjects, s.Status())
	}
	touch(t, gate)
	w.ok("wait", id)
	s := w.show(id)
	var prompts []string
	for _, tr := range s.Turns {
		prompts = append(prompts, tr.Prompt)
		if tr.Status() != record.StatusCompleted {
			t.Errorf("turn %d %s", tr.N, tr.Status())
		}
	}
	if !reflect.DeepEqual(prompts, []string{"first", "second", "third"}) || s.PendingInjects != 0 {
		t.Fatalf("turn prompts %q pending %d", prompts, s.PendingInjects)
	}
	for i, e := range s.Inbox {
		if e.State != record.InboxDelivered || e.Turn != i+2 {
			t.Errorf("inbox %d: %+v", i, e)
		}
	}
	// Per-turn usage from codex's cumulative totals: 700, then +200, +200.
	for i, want := range []int64{700, 200, 200} {
		if got := s.Turns[i].Usage.InputTokens; got != want {
			t.Errorf("turn %d input tokens %d, want %d", i+1, got, want)
		}
	}
	if s.Usage.InputTokens != 1100 {
		t.Errorf("total input %d", s.Usage.InputTokens)
	}
	// Follow-ups resume the same thread natively, in the working dir.
	inv := w.Invocations()
	for _, i := range []int{1, 2} {
		a := inv[i].Argv
		if a[0] != "exec" || a[1] != "resume" || a[len(a)-2] != s.ThreadID || inv[i].Cwd != w.Work {
			t.Errorf("turn %d ran %q in %s", i+1, a, inv[i].Cwd)
		}
	}
}

func TestInjectAfterCompletionResumesAndKeepsHistory(t *testing.T) {
	w := newWorld(t)
	w.setScript(fakeagent.Completes("first answer", 700), "again", fakeagent.Completes("second answer", 900))
	id := strings.Fields(w.ok("spawn", "--wait", "task one"))[0]
	out := w.ok("inject", "--wait", id, "again")
	if !strings.Contains(out, "turn 2 completed") || !strings.Contains(out, "second answer") {
		t.Fatalf("inject --wait printed %q", out)
	}
	s := w.show(id)
	if s.Turn != 2 || s.Status() != record.StatusCompleted || s.Turns[1].Usage.InputTokens != 200 {
		t.Fatalf("turns %+v", s.Turns)
	}
	var texts []string
	for _, m := range s.Messages {
		texts = append(texts, m.Role+":"+m.Text)
	}
	want := []string{"user:task one", "assistant:first answer", "user:again", "assistant:second answer"}
	if !reflect.DeepEqual(texts, want) {
		t.Fatalf("messages %q", texts)
	}
	if human := w.ok("show", id); !strings.Contains(human, "first answer") || !strings.Contains(human, "── turn 2") {
		t.Fatalf("show lost turn 1:\n%s", human)
	}
}

// grandchildren is an agent that starts a child in its group and one that
// escapes with setsid, runs a command, and never finishes on its own.
// With ignoreTerm, the agent (not its children, started before) ignores
// SIGTERM by the time it reports the command, which tests wait for.
func grandchildren(dir string, ignoreTerm bool) []fakeagent.Step {
	s := []fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		{"spawn": "exec sleep 1000", "pidfile": filepath.Join(dir, "child.pid")},
		{"spawn": "exec sleep 1001", "setsid": true, "pidfile": filepath.Join(dir, "escaped.pid")},
	}
	if ignoreTerm {
		s = append(s, fakeagent.Step{"ignore_sigterm": true})
	}
	return append(s,
		fakeagent.Out(`{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"sleep 1000","status":"in_progress"}}`),
		fakeagent.Step{"wait_file": filepath.Join(dir, "never")})
}

func TestKillLeavesNoProcessAlive(t *testing.T) {
	t.Parallel()
	for _, stubborn := range []bool{false, true} {
		name := map[bool]string{false: "agent obeys SIGTERM", true: "agent ignores SIGTERM"}[stubborn]
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			os.MkdirAll(w.State, 0o700)
			os.WriteFile(filepath.Join(w.State, "config.toml"), []byte("kill_grace = \"300ms\"\n"), 0o600)
			dir := t.TempDir()
			w.setScript(grandchildren(dir, stubborn))
			id := w.spawn("run forever")
			child, escaped := readPID(t, filepath.Join(dir, "child.pid")), readPID(t, filepath.Join(dir, "escaped.pid"))
			sessionstest.Eventually(t, "the command to show", func() bool { return strings.Contains(w.ok("logs", id), "sleep 1000") })
			if out := w.ok("kill", id[:8]); !strings.Contains(out, "killed") {
				t.Fatalf("kill printed %q", out)
			}
			// Checked at once: when kill returns, everything is gone.
			for _, pid := range []int{child, escaped} {
				if sessionstest.Alive(pid) {
					t.Errorf("pid %d survived the kill", pid)
				}
			}
			if left := sessionstest.MarkedProcs(id); len(left) > 0 {
				t.Errorf("processes of the session alive after kill: %v", left)
			}
			s := w.show(id)
			if s.Status() != record.StatusKilled || s.Turns[0].Status() != record.StatusKilled || s.EndedAt == nil {
				t.Fatalf("status %s turn %s", s.Status(), s.Turns[0].Status())
			}
			wantExit := 143
			if stubborn {
				wantExit = 137
			}
			if s.ExitCode == nil || *s.ExitCode != wantExit {
				t.Errorf("exit code %v, want %d", s.ExitCode, wantExit)
			}
			r := w.zwarm("kill", id)
			if r.code != 1 || !strings.Contains(r.stderr, "not running") {
				t.Errorf("second kill: exit %d %q", r.code, r.stderr)
			}
		})
	}
}

func TestSupervisorKilledIsReportedAndKillStillCleansUp(t *testing.T) {
	w := newWorld(t)
	dir := t.TempDir()
	w.setScript(grandchildren(dir, false))
	id := w.spawn("run forever")
	escaped := readPID(t, filepath.Join(dir, "escaped.pid"))
	var owner *proc.Ref
	sessionstest.Eventually(t, "the supervisor to own the session", func() bool {
		s := w.record(id)
		owner = s.Owner
		return owner != nil && owner.Role == "supervisor" && s.Agent != nil
	})
	if err := syscall.Kill(owner.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	sessionstest.Eventually(t, "the supervisor to die", func() bool { return !sessionstest.Alive(owner.PID) })
	// Its agent's guard stopped everything the agent started, the escaped
	// grandchild too; a reader that finds the supervisor dead records it,
	// having stopped what is left. The first may find the session's lock
	// still held: a SIGKILLed process reads as a zombie while its other
	// threads are still exiting, and lets go of its files only with the
	// last of them. A reader never waits for a lock: it reports the
	// failure unrecorded, and leaves the stopping to a later one, which
	// records it. What is asked is what holds once it is recorded.
	var list []session
	sessionstest.Eventually(t, "a reader to record the dead supervisor", func() bool {
		list = w.ls()
		rec := w.record(id)
		return len(list) == 1 && list[0].Status() == record.StatusFailed && rec.Status() == record.StatusFailed
	})
	if list[0].Status() != record.StatusFailed || !strings.Contains(list[0].Error, "supervisor") {
		t.Fatalf("after SIGKILL of the supervisor: want failed, saying the supervisor died; got %s %q", list[0].Status(), list[0].Error)
	}
	if sessionstest.Alive(escaped) || len(sessionstest.MarkedProcs(id)) > 0 {
		t.Fatalf("the reader left processes of a dead supervisor running: %v", sessionstest.MarkedProcs(id))
	}
	if r := w.zwarm("kill", id); r.code != 1 || !strings.Contains(r.stderr, "not running") {
		t.Fatalf("kill after the reader stopped it: exit %d %q", r.code, r.stderr)
	}
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := jsonUnmarshal([]byte(s), v); err != nil {
		t.Fatalf("%v in %q", err, s)
	}
}

func TestKilledSessionCanBeContinued(t *testing.T) {
	w := newWorld(t)
	dir := t.TempDir()
	w.setScript(fakeagent.Completes("resumed fine", 900), "run forever", grandchildren(dir, false))
	id := w.spawn("run forever")
	readPID(t, filepath.Join(dir, "escaped.pid"))
	sessionstest.Eventually(t, "a thread id", func() bool { return w.show(id).ThreadID != "" })
	w.ok("kill", id)
	out := w.ok("inject", "--wait", id, "pick up where you left off")
	if !strings.Contains(out, "turn 2 completed") {
		t.Fatalf("inject after kill: %q", out)
	}
	s := w.show(id)
	inv := w.Invocations()
	last := inv[len(inv)-1].Argv
	if s.Status() != record.StatusCompleted || s.Turns[0].Status() != record.StatusKilled || last[1] != "resume" || last[len(last)-2] != s.ThreadID {
		t.Fatalf("status %s, turn 1 %s, argv %q", s.Status(), s.Turns[0].Status(), last)
	}
}

// Piped, ls prints a tab-separated header and rows, untruncated, with no
// summary and no decoration; a note about an empty listing goes to stderr.
func TestLsPiped(t *testing.T) {
	w := newWorld(t)
	if r := w.zwarm("ls"); r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "no state dir at "+w.State) {
		t.Fatalf("ls of a state dir that is not there: %+v", r)
	}
	os.MkdirAll(w.State, 0o700)
	if r := w.zwarm("ls"); r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "no sessions in "+w.State) {
		t.Fatalf("empty ls: %+v", r)
	}
	long := "write the docs " + strings.Repeat("and more ", 30)
	id := strings.Fields(w.ok("spawn", "--wait", "-m", "gpt-5.1-codex", long))[0]
	out := w.ok("ls")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || lines[0] != "ID\tSTATUS\tCHANGES\tADAPTER\tMODEL\tTURN\tTOKENS\tCOST\tCREATED\tSOURCE\tTASK" {
		t.Fatalf("ls:\n%s", out)
	}
	f := strings.Split(lines[1], "\t")
	if len(f) != 11 || f[0] != id || f[1] != "completed" || f[2] != "in place" || f[3] != "codex" || f[4] != "gpt-5.1-codex" || f[5] != "1" ||
		f[6] != "710" || f[9] != "user" || f[10] != long {
		t.Fatalf("row %q", f)
	}
	if c := w.show(id).CostUSD; c == nil || f[7] != strconv.FormatFloat(*c, 'f', -1, 64) {
		t.Fatalf("cost %q, want %v", f[7], c)
	}
	if r := w.zwarm("ls", "--status", "running"); r.stdout != "" || !strings.Contains(r.stderr, "no running sessions (1 session in all") {
		t.Fatalf("ls --status running: %+v", r)
	}
}

// A SIGTERM to the supervisor that no kill explained (a shutdown, an
// administrator, a cluster's scheduler) is recorded as what it was; the
// command's own context, cancelled by the same signal, used to reach the
// agent first and have it recorded as "killed by zwarm kill".
func TestSupervisorSIGTERMFromElsewhere(t *testing.T) {
	w := newWorld(t)
	gate := filepath.Join(t.TempDir(), "never")
	w.setScript([]fakeagent.Step{fakeagent.Out(`{"type":"thread.started","thread_id":"t1"}`), {"wait_file": gate}})
	for i := 0; i < 3; i++ {
		id := w.spawn("hold")
		var sup int
		sessionstest.Eventually(t, "the agent to run", func() bool {
			r := w.record(id)
			if r.Owner != nil && r.ThreadID != "" {
				sup = r.Owner.PID
			}
			return sup != 0
		})
		syscall.Kill(sup, syscall.SIGTERM)
		w.zwarm("wait", id)
		if s := w.show(id); s.Status() != record.StatusKilled || s.Error != "stopped by SIGTERM" {
			t.Fatalf("round %d: %s %q", i, s.Status(), s.Error)
		}
	}
}

// A runner that does not exist is a usage error, and nothing is recorded.
func TestSpawnOnAnUnknownRunner(t *testing.T) {
	w := newWorld(t)
	r := w.zwarm("spawn", "--runner", "k8s", "task")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown runner "k8s" (known: local, slurm)`) {
		t.Fatalf("spawn --runner k8s: %+v", r)
	}
	if ids := w.IDs(); len(ids) != 0 {
		t.Fatalf("a refused spawn left sessions: %v", ids)
	}
}

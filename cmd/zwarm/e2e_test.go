package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// These tests drive the real agent CLIs: only the remote model is fake.

// realAgent describes how the fake model makes one CLI run a shell command.
type realAgent struct {
	name string
	tool string
	args func(cmd string) string
}

var realAgentKinds = []realAgent{
	{"codex", "exec_command", func(c string) string { return fmt.Sprintf(`{"cmd":%q}`, c) }},
	{"claude", "Bash", func(c string) string { return fmt.Sprintf(`{"command":%q}`, c) }},
}

// realWorld is a world whose workers are the real CLIs, pointed at a fake
// model through the same configuration files a user would write.
func realWorld(t *testing.T, defaultAdapter string) (*world, *fakemodel.Server) {
	t.Helper()
	codexBin, _ := realAgents(t)
	w := newWorld(t)
	srv, err := fakemodel.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	home := t.TempDir()
	// The installed CLIs are found on PATH, as a user's would be.
	w.extraEnv = []string{
		"PATH=" + filepath.Dir(codexBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"ZWARM_CODEX_BIN=", "ZWARM_CLAUDE_BIN=",
		"CODEX_HOME=" + filepath.Join(home, "codex"), "MOCK_KEY=dummy",
		"HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-ant-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1", "IS_SANDBOX=1", "CLAUDE_CODE_MAX_RETRIES=1",
	}
	os.MkdirAll(filepath.Join(home, "codex"), 0o700)
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), `
default_adapter = "`+defaultAdapter+`"
kill_grace = "2s"
[adapters.codex]
model = "gpt-5.5"
sandbox = "danger-full-access"
[adapters.claude]
sandbox = "danger-full-access"
[prices."gpt-5.5"]
input = 1.0
cached_input = 0.1
output = 10.0
`)
	w.codexProvider(srv.URL + "/v1")
	return w, srv
}

// codexProvider points codex at a model server through codex.toml, whose
// tables zwarm flattens into -c overrides.
func (w *world) codexProvider(baseURL string) {
	writeFile(w.t, filepath.Join(w.State, "codex.toml"), `
model_provider = "mock"
[model_providers.mock]
name = "mock"
base_url = "`+baseURL+`"
wire_api = "responses"
env_key = "MOCK_KEY"
request_max_retries = 0
stream_max_retries = 0
`)
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// forEachAgent runs fn for each real agent, in parallel with each other
// and with the package's other parallel tests: each has a world and a
// model server of its own, and the time goes into waiting for the agent.
func forEachAgent(t *testing.T, fn func(t *testing.T, a realAgent)) {
	t.Parallel()
	for _, a := range realAgentKinds {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			fn(t, a)
		})
	}
}

// hasStep reports whether a trajectory has a step of the type whose field
// contains want.
func hasStep(s *session, typ, field, want string) bool {
	for _, st := range s.Steps {
		if st["type"] == typ && strings.Contains(fmt.Sprint(st[field]), want) {
			return true
		}
	}
	return false
}

func TestRealAgentRunsACommandAndCreatesAFile(t *testing.T) {
	forEachAgent(t, func(t *testing.T, a realAgent) {
		w, srv := realWorld(t, a.name)
		srv.On("create the file",
			fakemodel.Reply{Reasoning: "I will use the shell", Tool: a.tool, Args: a.args("echo hello > made.txt && echo created")},
			fakemodel.Reply{Text: "made the file", InputTokens: 700, CachedTokens: 100, OutputTokens: 20})
		var s session
		mustJSON(t, w.ok("spawn", "--wait", "--json", "create the file"), &s)
		if s.Status() != record.StatusCompleted || s.LastMessage != "made the file" || s.ThreadID == "" {
			t.Fatalf("status %s message %q thread %q error %q", s.Status(), s.LastMessage, s.ThreadID, s.Error)
		}
		if b, err := os.ReadFile(filepath.Join(w.Work, "made.txt")); err != nil || string(b) != "hello\n" {
			t.Fatalf("made.txt: %q %v", b, err)
		}
		shown := w.show(s.ID)
		if !hasStep(shown, "command", "command", "echo hello > made.txt") || !hasStep(shown, "command", "exit_code", "0") ||
			!hasStep(shown, "reasoning", "text", "I will use the shell") {
			t.Fatalf("steps: %v", shown.Steps)
		}
		// Two model calls: 100+700 input (100 cached), 10+20 output.
		u := s.Usage
		switch a.name {
		case "codex":
			if u.InputTokens != 800 || u.CachedInputTokens != 100 || u.OutputTokens != 30 {
				t.Errorf("usage %+v", u)
			}
			want := (700*1.0 + 100*0.1 + 30*10.0) / 1e6
			if s.CostUSD == nil || fmt.Sprintf("%.9f", *s.CostUSD) != fmt.Sprintf("%.9f", want) {
				t.Errorf("cost %v, want %v from the price table", s.CostUSD, want)
			}
		case "claude":
			if u.InputTokens != 900 || u.CachedInputTokens != 100 || u.OutputTokens != 30 {
				t.Errorf("usage %+v", u)
			}
			if s.CostUSD == nil || *s.CostUSD <= 0 || s.Turns[0].CostUSD == nil || *s.Turns[0].CostUSD != *s.CostUSD {
				t.Errorf("cost %v (turn %v): claude's reported cost should be used", s.CostUSD, s.Turns[0].CostUSD)
			}
		}
	})
}

func TestRealAgentFollowUpResumesTheThread(t *testing.T) {
	forEachAgent(t, func(t *testing.T, a realAgent) {
		w, srv := realWorld(t, a.name)
		srv.On("first question", fakemodel.Reply{Text: "first answer"})
		srv.On("second question", fakemodel.Reply{Text: "second answer"})
		var s session
		mustJSON(t, w.ok("spawn", "--wait", "--json", "first question"), &s)
		thread := s.ThreadID
		out := w.ok("inject", "--wait", s.ID, "second question")
		if !strings.Contains(out, "turn 2 completed") || !strings.Contains(out, "second answer") {
			t.Fatalf("inject --wait: %q", out)
		}
		s = *w.show(s.ID)
		if s.ThreadID != thread || !s.Turns[1].Resumed || s.Turns[0].LastMessage != "first answer" {
			t.Fatalf("thread %q then %q, turns %+v", thread, s.ThreadID, s.Turns)
		}
		reqs := srv.Requests()
		last := string(reqs[len(reqs)-1].Body)
		if !strings.Contains(last, "first question") || !strings.Contains(last, "first answer") || !strings.Contains(last, "second question") {
			t.Fatalf("the resumed request lacks the first turn's history")
		}
	})
}

func TestRealAgentFollowUpsWhileATurnRuns(t *testing.T) {
	forEachAgent(t, func(t *testing.T, a realAgent) {
		w, srv := realWorld(t, a.name)
		gate := make(chan struct{})
		srv.On("long task", fakemodel.Reply{Text: "long done", Stall: gate})
		srv.On("follow up one", fakemodel.Reply{Text: "one done"})
		srv.On("follow up two", fakemodel.Reply{Text: "two done"})
		id := w.spawn("long task")
		sessionstest.Eventually(t, "the model to be asked", func() bool { return len(srv.Requests()) > 0 })
		for _, m := range []string{"follow up one", "follow up two"} {
			w.ok("inject", id, m)
		}
		if s := w.show(id); s.PendingInjects != 2 || s.Turn != 1 {
			t.Fatalf("while stalled: pending %d turn %d", s.PendingInjects, s.Turn)
		}
		close(gate)
		w.ok("wait", "--timeout", "120s", id)
		s := w.show(id)
		var got []string
		for _, tr := range s.Turns {
			got = append(got, tr.Prompt+"→"+tr.LastMessage+":"+string(tr.Status()))
		}
		want := []string{"long task→long done:completed", "follow up one→one done:completed", "follow up two→two done:completed"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("turns %q", got)
		}
		if a.name == "claude" && (!s.Turns[1].Live || !s.Turns[2].Live) {
			t.Errorf("claude follow-ups should go to the running process: %+v", s.Turns)
		}
		for _, e := range s.Inbox {
			if e.State != record.InboxDelivered {
				t.Errorf("inbox %+v", e)
			}
		}
	})
}

// awaitSleep1000 waits until session id's agent runs the command its
// model asked for: sleep 1000.
func awaitSleep1000(t *testing.T, id string) {
	t.Helper()
	sessionstest.Eventually(t, "sleep 1000 to run", func() bool {
		for _, pid := range sessionstest.MarkedProcs(id) {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.HasPrefix(string(b), "sleep\x001000") {
				return true
			}
		}
		return false
	})
}

func TestRealAgentKilledDuringACommand(t *testing.T) {
	forEachAgent(t, func(t *testing.T, a realAgent) {
		w, srv := realWorld(t, a.name)
		srv.On("sleepy", fakemodel.Reply{Tool: a.tool, Args: a.args("sleep 1000")})
		id := w.spawn("sleepy")
		awaitSleep1000(t, id)
		w.ok("kill", id)
		if left := sessionstest.MarkedProcs(id); len(left) > 0 {
			t.Fatalf("alive after kill: %v", left)
		}
		if s := w.show(id); s.Status() != record.StatusKilled {
			t.Fatalf("status %s", s.Status())
		}
	})
}

func TestRealAgentModelError(t *testing.T) {
	forEachAgent(t, func(t *testing.T, a realAgent) {
		w, srv := realWorld(t, a.name)
		srv.On("fail please", fakemodel.Reply{Status: 500}, fakemodel.Reply{Status: 500}, fakemodel.Reply{Status: 500})
		r := w.zwarm("spawn", "--wait", "--json", "fail please")
		var s session
		mustJSON(t, r.stdout, &s)
		if r.code != 1 || s.Status() != record.StatusFailed || s.Error == "" {
			t.Fatalf("exit %d status %s error %q", r.code, s.Status(), s.Error)
		}
		// The error is the agent's own message, as it printed it.
		raw := w.ok("logs", "--raw", s.ID)
		if !strings.Contains(raw, strings.SplitN(s.Error, "\n", 2)[0][:20]) {
			t.Fatalf("error %q is not the agent's message:\n%s", s.Error, raw)
		}
	})
}

func TestRealCodexGivesUpOnAnUnreachableModel(t *testing.T) {
	t.Parallel()
	w, _ := realWorld(t, "codex")
	w.codexProvider("http://127.0.0.1:1/v1") // nothing listens on port 1
	start := time.Now()
	r := w.zwarm("spawn", "--wait", "--json", "anyone there?")
	var s session
	mustJSON(t, r.stdout, &s)
	if r.code != 1 || s.Status() != record.StatusFailed || s.Error == "" {
		t.Fatalf("exit %d status %s error %q", r.code, s.Status(), s.Error)
	}
	if d := time.Since(start); d > 2*time.Minute {
		t.Fatalf("took %s to give up", d)
	}
}

func TestRealAgentsTwentyAtOnce(t *testing.T) {
	w, srv := realWorld(t, "codex")
	srv.Fallback(fakemodel.Reply{Text: "parallel done", InputTokens: 50, OutputTokens: 5})
	ids := make([]string, 20)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			adapter := realAgentKinds[i%2].name
			ids[i] = strings.TrimSpace(w.zwarm("spawn", "--adapter", adapter, fmt.Sprintf("parallel task %d", i)).stdout)
		}()
	}
	wg.Wait()
	w.ok(append([]string{"wait", "--timeout", "180s"}, ids...)...)
	list := w.ls()
	if len(list) != 20 {
		t.Fatalf("%d sessions", len(list))
	}
	var sum, turns int64
	kinds := map[string]int{}
	for _, s := range list {
		kinds[s.Adapter]++
		if s.Status() != record.StatusCompleted || s.LastMessage != "parallel done" {
			t.Errorf("%s %s: %s %q %s", s.ID, s.Adapter, s.Status(), s.LastMessage, s.Error)
		}
		sum += s.Usage.TotalTokens
		for _, tr := range w.show(s.ID).Turns { // a listing carries no turns
			turns += tr.Usage.TotalTokens
		}
	}
	if kinds["codex"] != 10 || kinds["claude"] != 10 || sum == 0 || sum != turns {
		t.Fatalf("kinds %v, session totals %d, turn totals %d", kinds, sum, turns)
	}
	// Piped, ls is a header and one tab-separated row per session.
	table := w.ok("ls")
	if rows := strings.Split(strings.TrimSpace(table), "\n"); len(rows) != 21 || strings.Count(table, "\tcompleted\t") != 20 {
		t.Fatalf("ls:\n%s", table)
	}
}

// Claude Code's subagents (its Task tool) call the model too: their tokens
// are in the turn's usage, where claude's own per-turn usage leaves them
// out, and a follow-up the same process serves counts only its own.
func TestRealClaudeCountsItsSubagentsTokens(t *testing.T) {
	t.Parallel()
	w, srv := realWorld(t, "claude")
	gate := make(chan struct{})
	srv.On("delegate the count",
		fakemodel.Reply{Tool: "Task", Args: `{"description":"count","prompt":"subtask: count the files","subagent_type":"general-purpose"}`, InputTokens: 1000, OutputTokens: 50},
		fakemodel.Reply{Text: "the subagent counted", InputTokens: 1200, OutputTokens: 30, Stall: gate})
	srv.On("subtask: count the files", fakemodel.Reply{Text: "sub done: 3 files", InputTokens: 7000, OutputTokens: 700})
	srv.On("and again", fakemodel.Reply{Text: "again done", InputTokens: 1300, OutputTokens: 20})
	id := w.spawn("delegate the count")
	sessionstest.Eventually(t, "the subagent to be asked", func() bool { return srv.Pending("subtask: count the files") == 0 })
	w.ok("inject", id, "and again")
	close(gate)
	w.ok("wait", "--timeout", "120s", id)
	s := w.show(id)
	if len(s.Turns) != 2 || !s.Turns[1].Live || s.Status() != record.StatusCompleted {
		t.Fatalf("%s, turns %+v", s.Status(), s.Turns)
	}
	if u := s.Turns[0].Usage; u.InputTokens != 1000+7000+1200 || u.OutputTokens != 50+700+30 {
		t.Errorf("turn 1 usage %+v: the subagent's 7000 in and 700 out belong in it", u)
	}
	if u := s.Turns[1].Usage; u.InputTokens != 1300 || u.OutputTokens != 20 {
		t.Errorf("turn 2 usage %+v, want its own call's 1300 in and 20 out", u)
	}
	if u := s.Usage; u.InputTokens != 10500 || u.OutputTokens != 800 {
		t.Errorf("session usage %+v", u)
	}
	if c1, c2 := s.Turns[0].CostUSD, s.Turns[1].CostUSD; s.CostUSD == nil || c1 == nil || c2 == nil || *c2 <= 0 || *c2 >= *c1 ||
		fmt.Sprintf("%.9f", *s.CostUSD) != fmt.Sprintf("%.9f", *c1+*c2) {
		t.Errorf("cost %v of turns %v and %v", s.CostUSD, s.Turns[0].CostUSD, s.Turns[1].CostUSD)
	}
}

package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/watch"
)

func TestMCPListToolsServesTheWorkerToolsRenamed(t *testing.T) {
	t.Parallel()
	c := connect(t, nil, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		b, _ := json.Marshal(tool.InputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: schema %s: %v", tool.Name, b, err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: schema %s does not resolve: %v", tool.Name, b, err)
		}
		if s.Type != "object" {
			t.Errorf("%s: schema type %q", tool.Name, s.Type)
		}
		// An unknown parameter is refused by the schema, as by the tool.
		if err := rs.Validate(map[string]any{"no_such_parameter": 1}); err == nil {
			t.Errorf("%s: the schema accepts an unknown parameter", tool.Name)
		}
		// Nothing a client shows its model names a tool it cannot call.
		for _, words := range append([]string{tool.Description}, propDescriptions(b)...) {
			if m := renamed().FindString(words); m != "" || strings.Contains(words, "[orchestrator]") || strings.Contains(words, "run's dir") {
				t.Errorf("%s: %q speaks of the orchestrator (%q)", tool.Name, words, m)
			}
		}
	}
	want := []string{"spawn", "wait", "show", "inject", "list", "kill", "get_trajectory", "diff", "land", "update"}
	if !slices.Equal(names, sorted(want)) { // the SDK lists tools by name
		t.Fatalf("tools %v, want %v", names, want)
	}
	spawn := list.Tools[slices.Index(names, "spawn")]
	b, _ := json.Marshal(spawn.InputSchema)
	var s jsonschema.Schema
	json.Unmarshal(b, &s)
	rs, _ := s.Resolve(nil)
	if err := rs.Validate(map[string]any{"task": "fix the test", "working_dir": "sub"}); err != nil {
		t.Errorf("spawn's schema refuses a good call: %v", err)
	}
	if err := rs.Validate(map[string]any{"working_dir": "sub"}); err == nil {
		t.Error("spawn's schema accepts a call without a task")
	}
	wait := list.Tools[slices.Index(names, "wait")]
	if !strings.Contains(wait.Description, "within 50s") {
		t.Errorf("wait does not say its cap: %s", wait.Description)
	}
	if init := c.cs.InitializeResult(); init.ServerInfo.Name != "zwarm" || !strings.Contains(init.Instructions, "spawn") ||
		!strings.Contains(init.Instructions, "land commits it onto the branch checked out in "+c.w.Work) {
		t.Errorf("server info %+v, instructions %q", init.ServerInfo, init.Instructions)
	}
}

func propDescriptions(schema []byte) []string {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	json.Unmarshal(schema, &s)
	var out []string
	for _, p := range s.Properties {
		out = append(out, p.Description)
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestMCPSpawnWaitShowList(t *testing.T) {
	t.Parallel()
	c := connect(t, nil, 0)
	c.w.Script(map[string][]fakeagent.Step{
		"write the parser": append([]fakeagent.Step{fakeagent.ChangesFile("parser.go")}, fakeagent.Completes("parser written, tests pass", 1200)...),
	})
	id := c.spawn("write the parser")
	s, err := c.w.Manager.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != (record.Source{Kind: record.SourceMCP}) || s.WorkingDir != c.w.Work || s.Task != "write the parser" {
		t.Fatalf("worker source %v dir %s task %q", s.Source, s.WorkingDir, s.Task)
	}

	var wr waitResult
	c.ok("wait", map[string]any{"session_ids": []string{id[:8]}}, &wr)
	if len(wr.Finished) != 1 || wr.Finished[0].SessionID != id || wr.Finished[0].Status != "completed" ||
		wr.Finished[0].LastMessage != "parser written, tests pass" || len(wr.Running) != 0 || wr.TimedOut || wr.Note != "" {
		t.Fatalf("wait: %+v", wr)
	}

	var shown struct {
		Status       string `json:"status"`
		LastMessage  string `json:"last_message"`
		FilesChanged []struct {
			Path string `json:"path"`
		} `json:"files_changed"`
		Usage struct {
			InputTokens int64 `json:"input_tokens"`
		} `json:"usage"`
	}
	c.ok("show", map[string]any{"session_id": id}, &shown)
	if shown.Status != "completed" || shown.LastMessage != "parser written, tests pass" || len(shown.FilesChanged) != 1 ||
		shown.FilesChanged[0].Path != "parser.go" || shown.Usage.InputTokens != 1200 {
		t.Fatalf("show: %+v", shown)
	}

	var list struct {
		Workers []struct {
			SessionID      string `json:"session_id"`
			NeedsAttention bool   `json:"needs_attention"`
		} `json:"workers"`
	}
	c.ok("list", map[string]any{}, &list)
	if len(list.Workers) != 1 || list.Workers[0].SessionID != id || list.Workers[0].NeedsAttention {
		t.Fatalf("list: %+v", list)
	}
	traj := c.ok("get_trajectory", map[string]any{"session_id": id}, nil)
	if !strings.Contains(traj, "parser written, tests pass") || !strings.Contains(traj, "parser.go") {
		t.Fatalf("trajectory:\n%s", traj)
	}
	// Nothing is left to wait for: wait says so at once.
	wr = waitResult{}
	c.ok("wait", map[string]any{}, &wr)
	if len(wr.Finished)+len(wr.Running) != 0 || wr.TimedOut || !strings.Contains(wr.Note, "nothing to wait for") {
		t.Fatalf("second wait: %+v", wr)
	}
}

// A wait that outlasts its timeout returns within it, says timed_out and
// what still runs, and sends progress while it blocks: a heartbeat, and
// each worker that finishes.
func TestMCPWaitTimesOutWithProgress(t *testing.T) {
	t.Parallel()
	// A cap of 20 s, above the shortest one can set (1 s here) and below
	// the default, so that the test waits less: time for heartbeats and a
	// worker's end even on a loaded machine, which the test awaits before
	// the cap can pass.
	const waitCap = 20 * time.Second
	c := connect(t, &Config{MaxWorkers: 4, WaitCap: config.Duration{Duration: waitCap}, MinWait: time.Second}, 500*time.Millisecond)
	gates := t.TempDir()
	gateA, gateB, gateC := filepath.Join(gates, "a"), filepath.Join(gates, "b"), filepath.Join(gates, "c")
	c.w.Script(map[string][]fakeagent.Step{
		"task a": append([]fakeagent.Step{fakeagent.WaitFile(gateA)}, fakeagent.Completes("a done", 100)...),
		"task b": append([]fakeagent.Step{fakeagent.WaitFile(gateB)}, fakeagent.Completes("b done", 100)...),
		"task c": append([]fakeagent.Step{fakeagent.WaitFile(gateC)}, fakeagent.Completes("c done", 100)...),
	})
	// c runs too, and the wait is not for it: the heartbeat names what
	// the wait waits for.
	a, b, other := c.spawn("task a"), c.spawn("task b"), c.spawn("task c")
	defer touch(t, gateC)

	type answer struct {
		res *mcp.CallToolResult
		at  time.Time
	}
	done := make(chan answer, 1)
	began := time.Now()
	go func() {
		// No timeout_s: the cap is the default.
		res, err := c.cs.CallTool(context.Background(), withToken(&mcp.CallToolParams{Name: "wait",
			Arguments: map[string]any{"session_ids": []string{a, b}, "mode": "all"}}, "wait-1"))
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		done <- answer{res, time.Now()}
	}()
	// The cap plus a minute for everything else.
	ctx, cancel := context.WithTimeout(context.Background(), waitCap+60*time.Second)
	defer cancel()
	// Two heartbeats: the wait is under way. Then one worker finishes.
	beats := c.awaitProgress(ctx, 2)
	touch(t, gateA)
	// Worker a's end is told while the wait still blocks.
	finished := fmt.Sprintf("worker %s completed", record.ShortID(a))
	var ans answer
	returned := false
	for told := false; !told && !returned; {
		c.mu.Lock()
		got, wake := append([]*mcp.ProgressNotificationParams(nil), c.progress...), c.notified
		c.mu.Unlock()
		for _, p := range got {
			told = told || p.Message == finished
		}
		if told {
			break
		}
		select {
		case <-wake:
		case ans = <-done:
			returned = true
			t.Errorf("the wait returned after %s, before the progress %q (%d notifications, the last %q): worker a should have finished well within the %s cap",
				ans.at.Sub(began).Round(time.Millisecond), finished, len(got), lastMessage(got), waitCap)
		case <-ctx.Done():
			t.Fatalf("no progress %q within %s of the gate for worker a (%d notifications, the last %q)", finished, waitCap+60*time.Second, len(got), lastMessage(got))
		}
	}
	if !returned {
		select {
		case ans = <-done:
		case <-ctx.Done():
			t.Fatalf("the wait did not return within %s though its cap is %s", waitCap+60*time.Second, waitCap)
		}
	}
	if ans.res.IsError {
		t.Fatalf("wait is an error: %s", text(ans.res))
	}
	var wr waitResult
	if err := json.Unmarshal([]byte(text(ans.res)), &wr); err != nil {
		t.Fatalf("wait's answer is not JSON (%v): %s", err, text(ans.res))
	}
	if !wr.TimedOut || len(wr.Finished) != 1 || wr.Finished[0].SessionID != a || wr.Finished[0].LastMessage != "a done" ||
		len(wr.Running) != 1 || wr.Running[0].SessionID != b || wr.Note != "" {
		t.Fatalf("wait should have timed out with %s finished (\"a done\") and %s running, and no note; it answered: %s", a, b, text(ans.res))
	}
	if took := ans.at.Sub(began); took < waitCap {
		t.Fatalf("the wait returned after %s, before its %s timeout", took, waitCap)
	}
	if !strings.Contains(beats[0].Message, "waited") || !strings.Contains(beats[0].Message, record.ShortID(b)) {
		t.Errorf("heartbeat %q does not say what runs", beats[0].Message)
	}
	if strings.Contains(beats[0].Message, record.ShortID(other)) {
		t.Errorf("heartbeat %q names %s, which the wait is not for", beats[0].Message, record.ShortID(other))
	}
	all := c.awaitProgress(ctx, 0)
	finishedNews := false
	for i, p := range all {
		if p.ProgressToken != "wait-1" {
			t.Errorf("notification %d has token %v", i, p.ProgressToken)
		}
		if i > 0 && p.Progress <= all[i-1].Progress {
			t.Errorf("progress does not increase: %v then %v", all[i-1].Progress, p.Progress)
		}
		if p.Message == finished {
			finishedNews = true
		}
	}
	if !finishedNews {
		t.Errorf("no notification that %s finished among %d", record.ShortID(a), len(all))
	}
	touch(t, gateB)
}

// lastMessage is the last progress notification's message, or "none".
func lastMessage(ps []*mcp.ProgressNotificationParams) string {
	if len(ps) == 0 {
		return "none"
	}
	return ps[len(ps)-1].Message
}

func withToken(p *mcp.CallToolParams, token any) *mcp.CallToolParams {
	p.SetProgressToken(token)
	return p
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestMCPInjectResumesAndKillStops(t *testing.T) {
	t.Parallel()
	c := connect(t, nil, 0)
	gate := filepath.Join(t.TempDir(), "gate")
	c.w.Script(map[string][]fakeagent.Step{
		"first question":  fakeagent.Completes("first answer", 100),
		"second question": fakeagent.Completes("second answer", 300),
		"long job":        append([]fakeagent.Step{fakeagent.WaitFile(gate)}, fakeagent.Completes("never", 100)...),
	})
	id := c.spawn("first question")
	var wr waitResult
	c.ok("wait", map[string]any{"session_ids": []string{id}}, &wr)
	var inj struct {
		Outcome string `json:"outcome"`
		Turn    int    `json:"turn"`
	}
	c.ok("inject", map[string]any{"session_id": id, "message": "second question"}, &inj)
	if inj.Outcome != string(sessions.InjectResumed) || inj.Turn != 2 {
		t.Fatalf("inject into a finished worker: %+v", inj)
	}
	wr = waitResult{}
	c.ok("wait", map[string]any{"session_ids": []string{id}}, &wr)
	if len(wr.Finished) != 1 || wr.Finished[0].Turn != 2 || wr.Finished[0].LastMessage != "second answer" {
		t.Fatalf("wait for the follow-up: %+v", wr)
	}

	long := c.spawn("long job")
	c.ok("inject", map[string]any{"session_id": long, "message": "and then this"}, &inj)
	if inj.Outcome != string(sessions.InjectQueued) {
		t.Fatalf("inject into a busy worker: %+v", inj)
	}
	var k struct {
		Stopped bool   `json:"stopped"`
		Status  string `json:"status"`
	}
	c.ok("kill", map[string]any{"session_id": long, "reason": "not needed"}, &k)
	if !k.Stopped || k.Status != "killed" {
		t.Fatalf("kill: %+v", k)
	}
	var shown struct {
		Status string `json:"status"`
	}
	c.ok("show", map[string]any{"session_id": long}, &shown)
	if shown.Status != "killed" {
		t.Fatalf("show after kill: %+v", shown)
	}
	k = struct {
		Stopped bool   `json:"stopped"`
		Status  string `json:"status"`
	}{}
	c.ok("kill", map[string]any{"session_id": long}, &k)
	if k.Stopped || k.Status != "killed" {
		t.Fatalf("second kill: %+v", k)
	}
}

// inject with interrupt stops a busy worker's turn and continues its
// thread with the message at once; the schema offers it.
func TestMCPInjectInterrupts(t *testing.T) {
	t.Parallel()
	c := connect(t, nil, 0)
	never := filepath.Join(t.TempDir(), "never")
	c.w.Script(map[string][]fakeagent.Step{
		"long job": {fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), fakeagent.Out(`{"type":"turn.started"}`), fakeagent.WaitFile(never)},
		"instead":  fakeagent.Completes("did it instead", 200),
	})
	tools, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	offered := false
	for _, tool := range tools.Tools {
		var schema struct {
			Properties map[string]struct{ Type string }
		}
		if b, _ := json.Marshal(tool.InputSchema); tool.Name == "inject" && json.Unmarshal(b, &schema) == nil {
			offered = schema.Properties["interrupt"].Type == "boolean"
		}
	}
	if !offered {
		t.Fatal("inject's schema offers no interrupt")
	}
	id := c.spawn("long job")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sub, err := c.w.Manager.Subscribe(ctx, watch.SubscribeOptions{IDs: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	for u := range sub.C() {
		if s := u.Session; s != nil && s.Interruptible() && s.ThreadID != "" {
			break
		}
	}
	sub.Close()
	var inj struct {
		Outcome string `json:"outcome"`
		Turn    int    `json:"turn"`
	}
	c.ok("inject", map[string]any{"session_id": id, "message": "instead", "interrupt": true}, &inj)
	if inj.Outcome != string(sessions.InjectInterrupted) || inj.Turn != 1 {
		t.Fatalf("inject with interrupt: %+v", inj)
	}
	var wr waitResult
	c.ok("wait", map[string]any{"session_ids": []string{id}}, &wr)
	if len(wr.Finished) != 1 || wr.Finished[0].Turn != 2 || wr.Finished[0].LastMessage != "did it instead" {
		t.Fatalf("wait: %+v", wr)
	}
	s, err := c.w.Manager.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Turns[0].Status() != record.StatusInterrupted || !s.Turns[1].Resumed {
		t.Fatalf("turns %+v", s.Turns)
	}
}

// A signal (Run's context ending) ends a call under way too: a wait, a
// landing's verify. The SDK gave each call a context a signal does not
// reach, and the server answered it first, up to verify's half hour
// later, landing a change the user had interrupted.
func TestMCPRunsEndStopsACallUnderWay(t *testing.T) {
	t.Parallel()
	w := testenv.New(t, bins, "")
	gate := filepath.Join(t.TempDir(), "never")
	w.Script(map[string][]fakeagent.Step{"task": append([]fakeagent.Step{fakeagent.WaitFile(gate)}, fakeagent.Completes("done", 10)...)})
	srv, err := New(Options{Sessions: w.Manager, Dir: w.Work, Config: &Config{MaxWorkers: 4, WaitCap: config.Duration{Duration: time.Minute}, MinWait: time.Second}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "spawn", Arguments: map[string]any{"task": "task"}})
	if err != nil || res.IsError {
		t.Fatalf("spawn: %v %+v", err, res)
	}
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{"timeout_s": 60}})
	time.Sleep(300 * time.Millisecond) // the wait is under way
	cancel()
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("Run still serves 10s after its context ended: the wait under way held it")
	}
}

// What a client was shown is kept from one server to the next: a new
// conversation does not take every worker that finished before it for
// news (each new server's first wait returned all of them), and one that
// finished while no server ran still is.
func TestMCPANewServerKnowsWhatWasShown(t *testing.T) {
	t.Parallel()
	w := testenv.New(t, bins, "")
	w.Script(map[string][]fakeagent.Step{"quick": fakeagent.Completes("quick done", 10)})
	opt := Options{Sessions: w.Manager, Dir: w.Work, Version: "test", SeenPath: filepath.Join(t.TempDir(), SeenFile),
		Config: &Config{MaxWorkers: 4, WaitCap: config.Duration{Duration: time.Minute}, MinWait: time.Second}}
	first := connectWith(t, w, opt)
	shown := first.spawn("quick")
	var wr waitResult
	first.ok("wait", map[string]any{"session_ids": []string{shown}}, &wr)
	unseen := first.spawn("quick")
	if _, err := w.Manager.Wait(t.Context(), []string{unseen}, sessions.WaitOptions{}); err != nil {
		t.Fatal(err)
	}
	first.cs.Close()
	next := connectWith(t, w, opt)
	wr = waitResult{}
	next.ok("wait", map[string]any{}, &wr)
	if len(wr.Finished) != 1 || !strings.Contains(fmt.Sprint(wr.Finished), unseen) || strings.Contains(fmt.Sprint(wr.Finished), shown) {
		t.Fatalf("a new server's first wait: %+v (shown before: %s, never shown: %s)", wr, shown[:8], unseen[:8])
	}
}

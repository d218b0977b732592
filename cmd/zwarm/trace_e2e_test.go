package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/runner/slurm/slurmtest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
	"github.com/zwarm/zwarm/sessions/sessionstest/jaegertest"
	"github.com/zwarm/zwarm/tui/web/webtest"
)

// An orchestrated run with two workers, the real codex on this machine and
// the real codex in a Slurm job, is one trace in a real Jaeger: the run,
// its steps, their model calls and tool calls, each worker under the
// delegate call that started it, its turn under it and the turn's command
// under that, sent by three processes (the orchestrator and two
// supervisors, one on the cluster's node), with usage and cost where they
// belong and no span whose parent is missing. zwarm trace sends the same
// tree, ids and times, rebuilt from the records, to another Jaeger.
func TestARunIsOneTraceInJaeger(t *testing.T) {
	t.Parallel()
	cluster := slurmtest.Cluster(t)
	live, rebuilt := jaegertest.Start(t), jaegertest.Start(t)
	w, srv := realWorld(t, "codex")
	w.extraEnv = append(append(w.extraEnv, cluster...), "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY=sk-test", "HOME="+t.TempDir())
	cfg, err := os.ReadFile(filepath.Join(w.State, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.State, "config.toml"), string(cfg)+fmt.Sprintf(`
[roles.cluster]
runner = "slurm"
[runner.slurm]
poll = "300ms"
[telemetry]
endpoint = %q
`, live.OTLP))

	task := "TRACE-E2E write two files"
	here, there := "write here.txt on this machine", "write there.txt on the cluster"
	srv.On(here, fakemodel.Reply{Tool: "exec_command", Args: `{"cmd":"printf 'here\\n' > here.txt"}`}, fakemodel.Reply{Text: "here.txt written"})
	srv.On(there, fakemodel.Reply{Tool: "exec_command", Args: `{"cmd":"printf 'there\\n' > there.txt"}`}, fakemodel.Reply{Text: "there.txt written"})
	srv.On(task,
		replyCalls(fcall("delegate", map[string]any{"task": here}),
			fcall("delegate", map[string]any{"task": there, "role": "cluster"})),
		replyCalls(fcall("wait", map[string]any{"mode": "all", "timeout_s": 240})),
		replyCalls(fcall("finish", map[string]any{"summary": "both files written"})))
	if r := w.zwarm("orchestrate", "--max-steps", "6", "--timeout", "5m", task); r.code != 0 {
		t.Fatalf("orchestrate: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	run := w.runs()[0]
	if run.Status != runs.StatusCompleted || len(run.Workers) != 2 {
		t.Fatalf("run %s with %d workers", run.Status, len(run.Workers))
	}
	var onCluster string
	for _, id := range run.Workers {
		if rec := w.record(id); rec.Job != nil {
			onCluster = rec.Job.ID
		}
		if rec := w.record(id); rec.Status() != record.StatusCompleted {
			t.Fatalf("worker %s is %s %q", id, rec.Status(), rec.Error)
		}
	}
	if onCluster == "" {
		t.Fatal("no worker ran as a Slurm job")
	}

	id := strings.ReplaceAll(run.ID, "-", "")
	// run, 3 steps, 3 chats, 4 tool calls, 2 sessions, 2 turns, 2 commands.
	const want = 17
	all, err := live.Trace(t.Context(), id, "zwarm", want, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	spans := ofService(all, "zwarm")
	tree := checkTrace(t, spans, onCluster)
	checkAgentSpans(t, all)

	r := w.zwarm("trace", run.ID[:8], "--endpoint", rebuilt.OTLP)
	if r.code != 0 || !strings.HasPrefix(r.stdout, id+"\t"+strconv.Itoa(want)+"\t") {
		t.Fatalf("zwarm trace: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	again, err := rebuilt.Trace(t.Context(), id, "zwarm", want, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got := checkTrace(t, again, onCluster); strings.Join(got, "\n") != strings.Join(tree, "\n") {
		t.Errorf("the rebuilt trace differs:\n%s\nsent live:\n%s", strings.Join(got, "\n"), strings.Join(tree, "\n"))
	}
	t.Run("in Jaeger's UI", func(t *testing.T) { seeInJaegerUI(t, live, id, all) })
}

// seeInJaegerUI opens the trace in Jaeger's own UI, in headless Chromium:
// its header counts every span the query API holds; folded to the depth
// of the workers' turns, it shows the tree as the tests check it (a row
// for each span that deep), saved as jaeger-trace.png (docs/telemetry.md
// shows it).
func seeInJaegerUI(t *testing.T, j *jaegertest.Jaeger, traceID string, all []jaegertest.Span) {
	if !j.UI {
		t.Skipf("Jaeger's UI is not in its Go module: set %s to a built jaeger-ui to look at the trace in it (docs/telemetry.md)", jaegertest.UIEnv)
	}
	ctx := webtest.Browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 700), chromedp.Navigate(j.Query+"/trace/"+traceID)); err != nil {
		t.Fatal(err)
	}
	webtest.WaitFor(t, ctx, "the trace in Jaeger's UI", `document.querySelectorAll(".span-row").length > 0`, time.Minute)
	total := webtest.Eval[string](t, ctx, `[...document.querySelectorAll("li")].map(e => e.innerText).find(s => s.startsWith("Total Spans")) || ""`)
	if n, ok := strings.CutPrefix(total, "Total Spans"); !ok || strings.TrimSpace(n) != strconv.Itoa(len(all)) {
		t.Errorf("Jaeger's UI says %q; the query API holds %d spans", total, len(all))
	}
	// Collapse all, then open one level at a time (the timeline header's
	// buttons: expand one, collapse one, expand all, collapse all).
	const depth = 4 // run, step, delegate, invoke_agent codex, turn 1
	webtest.Eval[bool](t, ctx, `(() => {
		const click = i => document.querySelectorAll(".TimelineCollapser > svg")[i].dispatchEvent(new MouseEvent("click", {bubbles: true}));
		click(3);
		for (let n = 0; n < `+strconv.Itoa(depth)+`; n++) click(0);
		return true;
	})()`)
	want := 0
	for _, d := range spanDepths(all) {
		if d <= depth {
			want++
		}
	}
	webtest.WaitFor(t, ctx, fmt.Sprintf("%d rows, the spans %d deep or less", want, depth),
		`document.querySelectorAll(".span-row").length === `+strconv.Itoa(want), 10*time.Second)
	for _, name := range []string{"invoke_agent zwarm", "execute_tool delegate", "invoke_agent codex", "turn 1"} {
		if !webtest.Eval[bool](t, ctx, `document.body.innerText.includes(`+strconv.Quote(name)+`)`) {
			t.Errorf("Jaeger's UI shows no %q", name)
		}
	}
	t.Logf("the trace in Jaeger's UI: %s", webtest.Screenshot(t, ctx, "jaeger-trace"))
}

// spanDepths is how deep each span is in its trace, the root 0.
func spanDepths(spans []jaegertest.Span) map[string]int {
	byID := map[string]jaegertest.Span{}
	for _, s := range spans {
		byID[s.SpanID] = s
	}
	depths := map[string]int{}
	for _, s := range spans {
		d := 0
		for p, ok := byID[s.Parent()]; ok; p, ok = byID[p.Parent()] {
			d++
		}
		depths[s.SpanID] = d
	}
	return depths
}

func ofService(spans []jaegertest.Span, service string) []jaegertest.Span {
	var out []jaegertest.Span
	for _, s := range spans {
		if s.Service == service {
			out = append(out, s)
		}
	}
	return out
}

// checkAgentSpans checks that the agents' own spans (codex honours the
// TRACEPARENT zwarm gives it) hang under the turns they worked in: the
// topmost span of each agent's that the trace holds is a turn's child.
func checkAgentSpans(t *testing.T, all []jaegertest.Span) {
	t.Helper()
	byID := map[string]jaegertest.Span{}
	for _, s := range all {
		byID[s.SpanID] = s
	}
	agents, underTurns := 0, map[string]bool{}
	for _, s := range all {
		if s.Service == "zwarm" {
			continue
		}
		agents++
		if p, ok := byID[s.Parent()]; ok && p.Service == "zwarm" {
			if p.OperationName != "turn 1" {
				t.Errorf("the agent's span %s (%s) hangs under zwarm's %s, not a turn", s.OperationName, s.Service, p.OperationName)
			}
			underTurns[p.SpanID] = true
		}
	}
	if agents == 0 || len(underTurns) != 2 {
		t.Errorf("%d spans of the agents; under %d of the 2 turns", agents, len(underTurns))
	}
}

// checkTrace checks a run's trace and returns it as lines "parent > span
// [id start duration]", sorted.
func checkTrace(t *testing.T, spans []jaegertest.Span, job string) []string {
	t.Helper()
	byID := map[string]jaegertest.Span{}
	op := func(s jaegertest.Span) string {
		if strings.HasPrefix(s.OperationName, "chat ") {
			return "chat" // the orchestrating model's name
		}
		return s.OperationName
	}
	for _, s := range spans {
		if _, dup := byID[s.SpanID]; dup {
			t.Errorf("span %s (%s) twice", s.SpanID, s.OperationName)
		}
		byID[s.SpanID] = s
	}
	var lines, roots []string
	count := map[string]int{}
	for _, s := range spans {
		parent := ""
		if p := s.Parent(); p != "" {
			ps, ok := byID[p]
			if !ok {
				t.Errorf("%s has a parent %s the trace does not hold", s.OperationName, p)
			}
			parent = op(ps)
		} else {
			roots = append(roots, s.OperationName)
		}
		edge := parent + " > " + op(s)
		count[edge]++
		lines = append(lines, fmt.Sprintf("%s [%s %d %d]", edge, s.SpanID, s.StartTime, s.Duration))
		tag := func(k string) string { v, _ := s.Tag(k); return v }
		switch op(s) {
		case "chat":
			if tag("gen_ai.usage.input_tokens") == "" || tag("gen_ai.usage.input_tokens") == "0" {
				t.Errorf("a model call without its usage: %v", s.Tags)
			}
		case "turn 1":
			if n, _ := strconv.Atoi(tag("gen_ai.usage.input_tokens")); n == 0 || tag("zwarm.cost_usd") == "" {
				t.Errorf("a worker's turn without its usage and cost: %v", s.Tags)
			}
		case "invoke_agent codex":
			if tag("zwarm.runner") == "slurm" && tag("zwarm.slurm.job_id") != job {
				t.Errorf("the cluster's worker names job %q, want %s", tag("zwarm.slurm.job_id"), job)
			}
		}
	}
	if len(roots) != 1 || roots[0] != "invoke_agent zwarm" {
		t.Errorf("roots %v, want the run alone", roots)
	}
	for edge, n := range map[string]int{
		"invoke_agent zwarm > step 1": 1, "invoke_agent zwarm > step 2": 1, "invoke_agent zwarm > step 3": 1,
		"step 1 > chat": 1, "step 2 > chat": 1, "step 3 > chat": 1, "step 1 > execute_tool delegate": 2, "step 2 > execute_tool wait": 1, "step 3 > execute_tool finish": 1,
		"execute_tool delegate > invoke_agent codex": 2, "invoke_agent codex > turn 1": 2, "turn 1 > execute_tool shell": 2,
	} {
		if count[edge] != n {
			t.Errorf("%d × %q, want %d; the trace:\n%s", count[edge], edge, n, strings.Join(lines, "\n"))
		}
	}
	sort.Strings(lines)
	return lines
}

// A worker spawned by hand is a trace of its own, and what a person does
// with it later joins that trace: its landing, with the --verify command
// under it, and a refused landing as a failed span; zwarm trace rebuilds
// the landing that landed.
func TestALandingJoinsTheWorkersTrace(t *testing.T) {
	t.Parallel()
	live, rebuilt := jaegertest.Start(t), jaegertest.Start(t)
	w := repoWorld(t, map[string]string{"README.md": "hello\n"})
	w.setScript(agentDoes(`printf 'x\n' > x.go`))
	w.extraEnv = append(w.extraEnv, "OTEL_EXPORTER_OTLP_ENDPOINT="+live.OTLP)
	id := w.spawn("add x")
	w.ok("wait", id)
	if r := w.zwarm("land", id, "--verify", "exit 3"); r.code != 1 {
		t.Fatalf("a landing whose verify fails: exit %d\n%s", r.code, r.stderr)
	}
	if r := w.zwarm("land", id, "--verify", "test -f x.go"); r.code != 0 {
		t.Fatalf("land: exit %d\n%s", r.code, r.stderr)
	}
	trace := strings.ReplaceAll(id, "-", "")
	// the session, its turn, the refused landing, its verify, the landing, its verify
	spans, err := live.Trace(t.Context(), trace, "zwarm", 6, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	edges := map[string]int{}
	names := map[string]string{}
	for _, s := range spans {
		names[s.SpanID] = s.OperationName
	}
	for _, s := range spans {
		edge := names[s.Parent()] + " > " + s.OperationName
		if res, _ := s.Tag("zwarm.landing.result"); res != "" {
			edge += " (" + res + ")"
		}
		if _, failed := s.Tag("error.type"); failed {
			edge += " failed"
		}
		edges[edge]++
	}
	for edge, n := range map[string]int{
		" > invoke_agent codex": 1, "invoke_agent codex > turn 1": 1,
		"invoke_agent codex > land (refused) failed": 1, "land > verify failed": 1,
		"invoke_agent codex > land (landed)": 1, "land > verify": 1,
	} {
		if edges[edge] != n {
			t.Errorf("%d × %q, want %d; all: %v", edges[edge], edge, n, edges)
		}
	}
	if r := w.zwarm("trace", id, "--endpoint", rebuilt.OTLP); r.code != 0 {
		t.Fatalf("zwarm trace: exit %d\n%s", r.code, r.stderr)
	}
	again, err := rebuilt.Trace(t.Context(), trace, "zwarm", 4, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range again {
		got[s.SpanID] = fmt.Sprint(s.OperationName, s.StartTime, s.Duration)
	}
	for _, s := range spans {
		if _, failed := s.Tag("error.type"); failed {
			continue // a refused landing is not in the records
		}
		if want := fmt.Sprint(s.OperationName, s.StartTime, s.Duration); got[s.SpanID] != want {
			t.Errorf("rebuilt %s as %q, sent live as %q", s.SpanID, got[s.SpanID], want)
		}
	}
}

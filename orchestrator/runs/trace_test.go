package runs_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/telemetry"
)

func sec(n int) time.Time { return time.Date(2026, 11, 29, 9, 0, n, 0, time.UTC) }

// aRun is the events of a run that delegated in step 1, waited in step 2,
// stopped, was resumed and finished in step 3.
func aRun() []runs.Event {
	const id = "7c1e2f3a-0000-4000-8000-00000000beef"
	cost := 0.01
	u := &record.Usage{InputTokens: 900, OutputTokens: 40, TotalTokens: 940}
	return []runs.Event{
		{Time: sec(0), Type: runs.EventStarted, Run: id, Task: "add rate limiting", Model: "gpt-5.1"},
		{Time: sec(1), Type: runs.EventModelCall, Run: id, Step: 1, InputItems: 2},
		{Time: sec(3), Type: runs.EventModelResponse, Run: id, Step: 1, DurationMS: 2000},
		{Time: sec(3), Type: runs.EventUsage, Run: id, Step: 1, Usage: u, CostUSD: &cost},
		{Time: sec(3), Type: runs.EventToolCall, Run: id, Step: 1, CallID: "call_1", Tool: "delegate", Args: json.RawMessage(`{"task":"secret plan"}`)},
		{Time: sec(4), Type: runs.EventToolResult, Run: id, Step: 1, CallID: "call_1", Tool: "delegate", Output: "started 0199"},
		{Time: sec(5), Type: runs.EventModelCall, Run: id, Step: 2},
		{Time: sec(6), Type: runs.EventModelResponse, Run: id, Step: 2},
		{Time: sec(6), Type: runs.EventUsage, Run: id, Step: 2, Usage: u, CostUSD: &cost},
		{Time: sec(6), Type: runs.EventToolCall, Run: id, Step: 2, CallID: "call_2", Tool: "wait"},
		{Time: sec(9), Type: runs.EventGuard, Run: id, Step: 2, Watcher: "stall", Action: "nudge", Text: "worker quiet"},
		{Time: sec(10), Type: runs.EventToolResult, Run: id, Step: 2, CallID: "call_2", Tool: "wait", IsError: true, Output: "timed out"},
		{Time: sec(11), Type: runs.EventStopped, Run: id, Step: 2, RunStatus: runs.StatusInterrupted},
		{Time: sec(20), Type: runs.EventResumed, Run: id, Text: "repaired nothing"},
		{Time: sec(21), Type: runs.EventModelCall, Run: id, Step: 3},
		{Time: sec(22), Type: runs.EventModelResponse, Run: id, Step: 3},
		{Time: sec(22), Type: runs.EventUsage, Run: id, Step: 3, Usage: u, CostUSD: &cost},
		{Time: sec(23), Type: runs.EventStopped, Run: id, Step: 3, RunStatus: runs.StatusCompleted, Summary: "done"},
	}
}

func build(content bool) []telemetry.Span {
	var out []telemetry.Span
	b := runs.Spans{Emit: func(s ...telemetry.Span) { out = append(out, s...) }, Content: content}
	for _, ev := range aRun() {
		b.Add(ev)
	}
	return out
}

func TestARunIsOneTraceOfStepsModelCallsAndTools(t *testing.T) {
	const id = "7c1e2f3a-0000-4000-8000-00000000beef"
	spans := build(false)
	name := map[[8]byte]string{}
	for _, s := range spans {
		if s.Trace != runs.TraceOf(id) {
			t.Errorf("%s is in trace %s", s.Name, s.Trace)
		}
		if _, dup := name[s.ID]; dup {
			t.Errorf("span id %s twice (%s)", s.ID, s.Name)
		}
		name[s.ID] = s.Name
	}
	var tree []string
	for _, s := range spans {
		tree = append(tree, name[s.Parent]+" > "+s.Name)
	}
	sort.Strings(tree)
	want := []string{
		" > invoke_agent zwarm",
		"invoke_agent zwarm > resume 1",
		"invoke_agent zwarm > step 1",
		"invoke_agent zwarm > step 2",
		"resume 1 > step 3",
		"step 1 > chat gpt-5.1",
		"step 1 > execute_tool delegate",
		"step 2 > chat gpt-5.1",
		"step 2 > execute_tool wait",
		"step 3 > chat gpt-5.1",
	}
	if strings.Join(tree, "\n") != strings.Join(want, "\n") {
		t.Fatalf("tree:\n%s\nwant:\n%s", strings.Join(tree, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range spans {
		switch s.Name {
		case "execute_tool delegate":
			if s.ID != runs.ToolSpan(id, 1, "call_1") || !s.Start.Equal(sec(3)) || !s.End.Equal(sec(4)) || s.Error != "" {
				t.Errorf("delegate: %+v", s)
			}
		case "execute_tool wait":
			if s.Error != "tool_error" {
				t.Errorf("the failed wait has error %q", s.Error)
			}
		case "step 2":
			if len(s.Events) != 1 || s.Events[0].Name != "guard" || !s.End.Equal(sec(11)) {
				t.Errorf("step 2: events %+v, end %v", s.Events, s.End)
			}
		case "invoke_agent zwarm":
			if !s.Start.Equal(sec(0)) || !s.End.Equal(sec(11)) {
				t.Errorf("the run's first stretch: %v to %v", s.Start, s.End)
			}
		}
	}
	chat := spans[0]
	for _, s := range spans {
		if s.Name == "chat gpt-5.1" {
			chat = s
			break
		}
	}
	var in int64
	for _, a := range chat.Attrs {
		if a.Key == telemetry.InputTokens {
			in = a.Value.AsInt64()
		}
	}
	if in != 900 || !chat.Start.Equal(sec(1)) || !chat.End.Equal(sec(3)) {
		t.Errorf("chat of step 1: %d input tokens, %v to %v", in, chat.Start, chat.End)
	}
}

func TestARunsWordsStayHomeWithoutContent(t *testing.T) {
	for _, content := range []bool{false, true} {
		var all strings.Builder
		for _, s := range build(content) {
			for _, a := range s.Attrs {
				all.WriteString(a.Value.Emit() + "\n")
			}
			for _, ev := range s.Events {
				for _, a := range ev.Attrs {
					all.WriteString(a.Value.Emit() + "\n")
				}
			}
		}
		for _, w := range []string{"secret plan", "add rate limiting", "worker quiet", "timed out"} {
			if strings.Contains(all.String(), w) != content {
				t.Errorf("content=%v: %q exported: %v", content, w, !content)
			}
		}
	}
}

// A run whose process died (kill -9) in step 2, while it asked the
// person, was resumed, asked again in step 2, and finished: it is still
// one tree under one root. The dead process's span and its open step end
// at its last event, as interrupted; the step asked again is a span of
// its own, under the resumption; no id is sent twice. The same holds
// when the spans are made live, the earlier events taken in unsent.
func TestARunWhoseProcessDiedIsStillOneTree(t *testing.T) {
	const id = "7c1e2f3a-0000-4000-8000-00000000dead"
	cost := 0.01
	u := &record.Usage{InputTokens: 900, OutputTokens: 40, TotalTokens: 940}
	events := []runs.Event{
		{Time: sec(0), Type: runs.EventStarted, Run: id, Task: "t", Model: "gpt-5.1"},
		{Time: sec(1), Type: runs.EventModelCall, Run: id, Step: 1},
		{Time: sec(2), Type: runs.EventModelResponse, Run: id, Step: 1},
		{Time: sec(2), Type: runs.EventUsage, Run: id, Step: 1, Usage: u, CostUSD: &cost},
		{Time: sec(3), Type: runs.EventModelCall, Run: id, Step: 2},
		{Time: sec(4), Type: runs.EventModelResponse, Run: id, Step: 2},
		{Time: sec(4), Type: runs.EventUsage, Run: id, Step: 2, Usage: u, CostUSD: &cost},
		{Time: sec(4), Type: runs.EventToolCall, Run: id, Step: 2, CallID: "call_ask", Tool: "ask_user"},
		{Time: sec(5), Type: runs.EventQuestion, Run: id, Step: 2, QuestionID: "q1", Text: "which port?"},
		// killed here; resumed a minute later
		{Time: sec(60), Type: runs.EventResumed, Run: id, Step: 1, Text: "resumed a run that was interrupted after 1 step"},
		{Time: sec(61), Type: runs.EventModelCall, Run: id, Step: 2},
		{Time: sec(62), Type: runs.EventModelResponse, Run: id, Step: 2},
		{Time: sec(62), Type: runs.EventUsage, Run: id, Step: 2, Usage: u, CostUSD: &cost},
		{Time: sec(63), Type: runs.EventStopped, Run: id, Step: 2, RunStatus: runs.StatusCompleted, Summary: "done"},
	}
	check := func(t *testing.T, spans []telemetry.Span) {
		byID := map[[8]byte]telemetry.Span{}
		for _, s := range spans {
			if _, dup := byID[s.ID]; dup {
				t.Errorf("span id %s sent twice (%s)", s.ID, s.Name)
			}
			byID[s.ID] = s
		}
		var tree []string
		for _, s := range spans {
			p, ok := byID[s.Parent]
			if !ok && s.Parent.IsValid() {
				t.Errorf("%s has a parent never sent", s.Name)
			}
			// A resumption hangs under the root, after it: the root is
			// the first process's span.
			if ok && !strings.HasPrefix(s.Name, "resume ") && (s.Start.Before(p.Start) || s.End.After(p.End)) {
				t.Errorf("%s (%v to %v) is outside its parent %s (%v to %v)", s.Name, s.Start, s.End, p.Name, p.Start, p.End)
			}
			tree = append(tree, p.Name+" > "+s.Name)
		}
		sort.Strings(tree)
		want := []string{
			" > invoke_agent zwarm",
			"invoke_agent zwarm > resume 1",
			"invoke_agent zwarm > step 1",
			"invoke_agent zwarm > step 2",
			"resume 1 > step 2",
			"step 1 > chat gpt-5.1",
			"step 2 > chat gpt-5.1",
			"step 2 > chat gpt-5.1",
			"step 2 > execute_tool ask_user",
		}
		if strings.Join(tree, "\n") != strings.Join(want, "\n") {
			t.Fatalf("tree:\n%s\nwant:\n%s", strings.Join(tree, "\n"), strings.Join(want, "\n"))
		}
		root := byID[telemetry.SpanOf("run", id)]
		status := ""
		for _, a := range root.Attrs {
			if a.Key == "zwarm.status" {
				status = a.Value.AsString()
			}
		}
		if !root.End.Equal(sec(5)) || status != string(runs.StatusInterrupted) {
			t.Errorf("the dead process's span ends %v as %q, want at its last event (%v), interrupted", root.End, status, sec(5))
		}
	}
	t.Run("rebuilt", func(t *testing.T) {
		var out []telemetry.Span
		b := runs.Spans{Emit: func(s ...telemetry.Span) { out = append(out, s...) }}
		for _, ev := range events {
			b.Add(ev)
		}
		check(t, out)
	})
	t.Run("live", func(t *testing.T) {
		// The dead process sent what it finished; the resumed one takes
		// its events in unsent, then sends from its resumption on.
		var out []telemetry.Span
		dead := runs.Spans{Emit: func(s ...telemetry.Span) { out = append(out, s...) }}
		for _, ev := range events[:9] {
			dead.Add(ev)
		}
		b := runs.Spans{Emit: func(...telemetry.Span) {}}
		for _, ev := range events[:9] {
			b.Add(ev)
		}
		b.Emit = func(s ...telemetry.Span) { out = append(out, s...) }
		for _, ev := range events[9:] {
			b.Add(ev)
		}
		check(t, out)
	})
}

// A run whose process died and that was never resumed is a tree all the
// same, once its reader says so (Interrupted): its root and the step it
// died in end at its last event, as interrupted, the call it was in as
// unfinished. Without it such a run sent no root, and zwarm trace sent
// nothing of it.
func TestADeadRunNeverResumedIsATree(t *testing.T) {
	const id = "7c1e2f3a-0000-4000-8000-00000000dea2"
	events := []runs.Event{
		{Time: sec(0), Type: runs.EventStarted, Run: id, Task: "t", Model: "gpt-5.1"},
		{Time: sec(1), Type: runs.EventModelCall, Run: id, Step: 1},
		{Time: sec(2), Type: runs.EventModelResponse, Run: id, Step: 1},
		{Time: sec(2), Type: runs.EventToolCall, Run: id, Step: 1, CallID: "call_wait", Tool: "wait"},
	}
	var out []telemetry.Span
	b := runs.Spans{Emit: func(s ...telemetry.Span) { out = append(out, s...) }}
	for _, ev := range events {
		b.Add(ev)
	}
	b.Interrupted()
	names := map[string]telemetry.Span{}
	for _, s := range out {
		names[s.Name] = s
	}
	root, ok := names["invoke_agent zwarm"]
	if !ok || !root.End.Equal(sec(2)) || names["execute_tool wait"].Error != "unfinished" || names["step 1"].Parent != root.ID {
		t.Fatalf("spans %+v", names)
	}
	b.Interrupted() // a second time adds nothing
	if len(out) != len(names) {
		t.Fatalf("%d spans, %d names", len(out), len(names))
	}
}

package telemetry_test

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/telemetry"
)

func at(sec int) time.Time { return time.Date(2026, 11, 29, 10, 0, sec, 0, time.UTC) }

func exitCode(n int) *int { return &n }

// worker is a session started by a run's tool call, with one turn that ran
// a command, said something and changed a file.
func worker() (*record.Session, []record.Event, map[string]telemetry.ItemTime) {
	run := telemetry.TraceOf("7c1e2f3a-0000-4000-8000-00000000beef")
	call := telemetry.SpanOf("tool", "7c1e2f3a-0000-4000-8000-00000000beef", "call_1")
	end := at(30)
	cost := 0.25
	s := new(statusfield.With(record.Session{ID: "0199a213-81c0-7800-8aa1-bbab2a035a53", Task: "fix the secret test", Adapter: "codex", Model: "gpt-5.1-codex",
		CreatedAt: at(0), EndedAt: &end, Turn: 1, TraceParent: telemetry.TraceParent(run, call),
		Usage: record.Usage{InputTokens: 1200, OutputTokens: 80, TotalTokens: 1280}, CostUSD: &cost}, record.StatusCompleted))
	s.Turns = []record.Turn{statusfield.With(record.Turn{N: 1, Prompt: "fix the secret test", StartedAt: at(2), EndedAt: &end,
		ExitCode: exitCode(0), Usage: s.Usage, CostUSD: &cost}, record.StatusCompleted)}
	items := []record.Event{
		{Type: record.EventCommand, ItemID: "item_1", Command: "go test ./...", ExitCode: exitCode(1), Status: "failed"},
		{Type: record.EventMessage, ItemID: "item_2", Text: "the password is hunter2"},
		{Type: record.EventFileChange, ItemID: "item_3", Changes: []record.FileChange{{Path: "a_test.go", Kind: "update"}}},
	}
	times := map[string]telemetry.ItemTime{
		"item_1": {Item: "item_1", Start: at(5), End: at(9)},
		"item_2": {Item: "item_2", Start: at(20), End: at(20)},
	}
	return s, items, times
}

func export(t *testing.T, content bool, spans ...telemetry.Span) tracetest.SpanStubs {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tr := telemetry.New(exp, content)
	tr.Emit(spans...)
	tr.Flush()
	got := exp.GetSpans()
	tr.Close()
	return got
}

func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

func TestAWorkersSpansHangUnderTheToolCallThatStartedIt(t *testing.T) {
	s, items, times := worker()
	spans := append([]telemetry.Span{telemetry.SessionSpan(s, *s.EndedAt, false)}, telemetry.TurnSpans(s, &s.Turns[0], items, times, "", false)...)
	got := export(t, false, spans...)
	if len(got) != 3 {
		t.Fatalf("%d spans, want the session, its turn and the command's", len(got))
	}
	byName := map[string]tracetest.SpanStub{}
	for _, sp := range got {
		byName[sp.Name] = sp
		if sp.SpanContext.TraceID() != telemetry.TraceOf("7c1e2f3a-0000-4000-8000-00000000beef") {
			t.Errorf("%s is in trace %s, not the run's", sp.Name, sp.SpanContext.TraceID())
		}
	}
	sess, turn, cmd := byName["invoke_agent codex"], byName["turn 1"], byName["execute_tool shell"]
	if want := telemetry.SpanOf("tool", "7c1e2f3a-0000-4000-8000-00000000beef", "call_1"); sess.Parent.SpanID() != want {
		t.Errorf("the session's parent is %s, want the tool call %s", sess.Parent.SpanID(), want)
	}
	if turn.Parent.SpanID() != sess.SpanContext.SpanID() || cmd.Parent.SpanID() != turn.SpanContext.SpanID() {
		t.Errorf("tree: session %s, turn %s under %s, command under %s", sess.SpanContext.SpanID(), turn.SpanContext.SpanID(), turn.Parent.SpanID(), cmd.Parent.SpanID())
	}
	if !cmd.StartTime.Equal(at(5)) || !cmd.EndTime.Equal(at(9)) || !turn.StartTime.Equal(at(2)) || !sess.StartTime.Equal(at(0)) {
		t.Errorf("times: session %v, turn %v, command %v-%v", sess.StartTime, turn.StartTime, cmd.StartTime, cmd.EndTime)
	}
	if v, _ := attr(cmd, "error.type"); v.AsString() != "exit 1" || cmd.Status.Description != "exit 1" {
		t.Errorf("the failed command's error: %q, status %+v", v.AsString(), cmd.Status)
	}
	if v, _ := attr(turn, "gen_ai.usage.input_tokens"); v.AsInt64() != 1200 {
		t.Errorf("the turn's input tokens: %v", v)
	}
	if v, _ := attr(sess, "zwarm.cost_usd"); v.AsFloat64() != 0.25 {
		t.Errorf("the session's cost: %v", v)
	}
	var events []string
	for _, ev := range turn.Events {
		events = append(events, ev.Name+"@"+ev.Time.Format("05"))
	}
	// The file change has no time of its own: it has the turn's start.
	if strings.Join(events, " ") != "message@20 file_change@02" {
		t.Errorf("the turn's events: %v", events)
	}
}

func TestWithoutContentNoWordsLeave(t *testing.T) {
	s, items, times := worker()
	for _, content := range []bool{false, true} {
		spans := append([]telemetry.Span{telemetry.SessionSpan(s, *s.EndedAt, content)}, telemetry.TurnSpans(s, &s.Turns[0], items, times, "", content)...)
		var all strings.Builder
		for _, sp := range export(t, content, spans...) {
			for _, a := range sp.Attributes {
				all.WriteString(a.Value.Emit() + "\n")
			}
			for _, ev := range sp.Events {
				for _, a := range ev.Attributes {
					all.WriteString(a.Value.Emit() + "\n")
				}
			}
		}
		for _, words := range []string{"hunter2", "go test", "fix the secret test"} {
			if strings.Contains(all.String(), words) != content {
				t.Errorf("content=%v: %q exported: %v", content, words, strings.Contains(all.String(), words))
			}
		}
		if !strings.Contains(all.String(), "update a_test.go") {
			t.Errorf("content=%v: the changed file's path is missing", content)
		}
	}
}

func TestASessionOfItsOwnIsATraceOfItsOwn(t *testing.T) {
	s, _, _ := worker()
	s.TraceParent = ""
	got := export(t, false, telemetry.SessionSpan(s, *s.EndedAt, false))
	if len(got) != 1 || got[0].Parent.IsValid() || got[0].SpanContext.TraceID() != telemetry.TraceOf(s.ID) {
		t.Fatalf("want one root span in the session's own trace %s: %+v", telemetry.TraceOf(s.ID), got)
	}
	if got[0].SpanContext.TraceID().String() != strings.ReplaceAll(s.ID, "-", "") {
		t.Errorf("the trace id %s is not the session's id %s", got[0].SpanContext.TraceID(), s.ID)
	}
}

func TestIDsAreTheSameInEveryProcess(t *testing.T) {
	a, b := telemetry.SpanOf("turn", "x", 1), telemetry.SpanOf("turn", "x", 1)
	if a != b || a == telemetry.SpanOf("turn", "x", 2) || !a.IsValid() {
		t.Errorf("span ids: %s %s %s", a, b, telemetry.SpanOf("turn", "x", 2))
	}
	tp := telemetry.TraceParent(telemetry.TraceOf("run"), a)
	sc, ok := telemetry.ParseParent(tp)
	if !ok || sc.SpanID() != a || sc.TraceID() != telemetry.TraceOf("run") || !sc.IsSampled() {
		t.Errorf("traceparent %q read back as %+v", tp, sc)
	}
	if _, ok := telemetry.ParseParent("00-zz-zz-01"); ok {
		t.Error("a malformed traceparent was taken")
	}
	ctx := telemetry.Context(t.Context(), telemetry.TraceOf("run"), a)
	if telemetry.Parent(ctx) != tp || trace.SpanContextFromContext(ctx).SpanID() != a {
		t.Errorf("Parent of Context: %q, want %q", telemetry.Parent(ctx), tp)
	}
}

func TestOffIsNil(t *testing.T) {
	var tr *telemetry.Tracer
	s, _, _ := worker()
	tr.Emit(telemetry.SessionSpan(s, *s.EndedAt, true))
	tr.Close()
	if tr.Content() {
		t.Error("a nil tracer exports content")
	}
}

func TestTheClockNotesEachItemOnce(t *testing.T) {
	var c telemetry.Clock
	c.Observe([]record.Event{{Type: record.EventCommand, ItemID: "i1", Phase: record.PhaseStarted, Command: "make"}}, at(1))
	c.Observe([]record.Event{{Type: record.EventMessage, Text: "no id"}, {Type: record.EventCommand, ItemID: "i1", Phase: record.PhaseCompleted,
		Command: "make", Output: strings.Repeat("x", 1<<20), ExitCode: exitCode(0)}}, at(4))
	times, items := c.Times(), c.Items()
	if len(times) != 1 || !times[0].Start.Equal(at(1)) || !times[0].End.Equal(at(4)) {
		t.Fatalf("times %+v", times)
	}
	if items[0].Output != "" || items[0].ExitCode == nil || *items[0].ExitCode != 0 || items[0].Type != record.EventCommand {
		t.Errorf("the item kept is %+v, want its latest event without its output", items[0])
	}
	var b strings.Builder
	if err := telemetry.WriteTimes(&b, times); err != nil {
		t.Fatal(err)
	}
	back := telemetry.ReadTimes(strings.NewReader(b.String() + `{"item":"cut`))
	if got := back["i1"]; len(back) != 1 || !got.End.Equal(at(4)) {
		t.Errorf("read back %+v from %q", back, b.String())
	}
}

// A follow-up's turn links to what sent it (an orchestrator's converse
// call), whose traceparent its inbox entry kept.
func TestAFollowUpsTurnLinksToWhatSentIt(t *testing.T) {
	s, items, times := worker()
	sender := telemetry.TraceParent(telemetry.TraceOf("7c1e2f3a-0000-4000-8000-00000000beef"), telemetry.SpanOf("tool", "x", 3, "call_9"))
	sentBy := telemetry.SentBy([]record.InboxEntry{{ID: "e1", TraceParent: sender}, {ID: "e2"}})
	s.Turns[0].InboxID = "e1"
	got := export(t, false, telemetry.TurnSpans(s, &s.Turns[0], items, times, sentBy[s.Turns[0].InboxID], false)...)
	for _, sp := range got {
		if sp.Name != "turn 1" {
			continue
		}
		if len(sp.Links) != 1 || sp.Links[0].SpanContext.SpanID() != telemetry.SpanOf("tool", "x", 3, "call_9") {
			t.Fatalf("the turn's links: %+v", sp.Links)
		}
		return
	}
	t.Fatal("no turn span")
}

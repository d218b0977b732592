package telemetry

import (
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/zwarm/zwarm/sessions/record"
)

// Where a session's spans go: the trace and parent its record names (the
// tool call that started it), or a trace of its own.
func sessionTrace(s *record.Session) (trace.TraceID, trace.SpanID) {
	if sc, ok := ParseParent(s.TraceParent); ok {
		return sc.TraceID(), sc.SpanID()
	}
	return TraceOf(s.ID), trace.SpanID{}
}

// SessionTrace is the trace session s's spans are in.
func SessionTrace(s *record.Session) trace.TraceID {
	t, _ := sessionTrace(s)
	return t
}

// SessionSpanID is the id of session id's own span.
func SessionSpanID(id string) trace.SpanID { return SpanOf("session", id) }

// TurnSpanID is the id of turn n of session id.
func TurnSpanID(id string, n int) trace.SpanID { return SpanOf("turn", id, n) }

// SentBy is, by inbox entry id, the traceparent of what sent each of a
// session's follow-ups (TurnSpans' sentBy).
func SentBy(entries []record.InboxEntry) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		if e.TraceParent != "" {
			out[e.ID] = e.TraceParent
		}
	}
	return out
}

// SessionSpan is session s's own span, from its creation to end: the
// agent invoked for a task, until the session first settled.
func SessionSpan(s *record.Session, end time.Time, content bool) Span {
	tr, parent := sessionTrace(s)
	attrs := []attribute.KeyValue{OperationName.String(OpInvokeAgent), AgentName.String(s.Adapter), AgentID.String(s.ID),
		RequestModel.String(s.Model), attribute.String("zwarm.session.id", s.ID), attribute.String("zwarm.status", string(s.Status())),
		attribute.Int("zwarm.turns", s.Turn)}
	attrs = append(attrs, usageAttrs(s.Usage, s.CostUSD)...)
	if s.ThreadID != "" {
		attrs = append(attrs, ConversationID.String(s.ThreadID))
	}
	if w := s.Workspace; w != nil {
		attrs = append(attrs, attribute.String("zwarm.worktree", w.Path), attribute.String("zwarm.branch", w.Branch))
	}
	if j := s.Job; j != nil {
		attrs = append(attrs, attribute.String("zwarm.runner", j.Runner), attribute.String("zwarm.slurm.job_id", j.ID))
	} else {
		attrs = append(attrs, attribute.String("zwarm.runner", "local"))
	}
	if s.Role != "" {
		attrs = append(attrs, attribute.String("zwarm.role", s.Role))
	}
	attrs = append(attrs, Words("zwarm.task", s.Task, content)...)
	sp := Span{Trace: tr, ID: SessionSpanID(s.ID), Parent: parent, Name: OpInvokeAgent + " " + s.Adapter,
		Kind: trace.SpanKindInternal, Start: s.CreatedAt, End: end, Attrs: attrs}
	if s.Status() == record.StatusFailed {
		sp.Error = "failed"
	}
	return sp
}

// TurnSpans are turn t's span and, under it, a span for each command and
// tool call of items; the turn's other items (messages, reasoning, file
// changes, plans, errors) are its events. times are the items' times; an
// item without one has the turn's. sentBy is the traceparent of what sent
// a follow-up's turn (an orchestrator's converse call), which the turn
// links to.
func TurnSpans(s *record.Session, t *record.Turn, items []record.Event, times map[string]ItemTime, sentBy string, content bool) []Span {
	tr, _ := sessionTrace(s)
	end := t.StartedAt
	if t.EndedAt != nil {
		end = *t.EndedAt
	}
	id := TurnSpanID(s.ID, t.N)
	attrs := []attribute.KeyValue{attribute.String("zwarm.session.id", s.ID), attribute.Int("zwarm.turn", t.N),
		attribute.String("zwarm.status", string(t.Status())), RequestModel.String(s.Model)}
	attrs = append(attrs, usageAttrs(t.Usage, t.CostUSD)...)
	if t.ExitCode != nil {
		attrs = append(attrs, attribute.Int("zwarm.exit_code", *t.ExitCode))
	}
	attrs = append(attrs, Words("zwarm.prompt", t.Prompt, content)...)
	turn := Span{Trace: tr, ID: id, Parent: SessionSpanID(s.ID), Name: fmt.Sprintf("turn %d", t.N),
		Start: t.StartedAt, End: end, Attrs: attrs}
	if sc, ok := ParseParent(sentBy); ok {
		turn.Links = append(turn.Links, sc)
	}
	switch t.Status() {
	case record.StatusFailed:
		turn.Error = "failed"
	case record.StatusKilled:
		turn.Error = "killed"
	}
	out := []Span{{}}
	for _, ev := range items {
		at, ok := times[ev.ItemID]
		if !ok {
			at = ItemTime{Start: t.StartedAt, End: end}
		}
		if sp, ok := itemSpan(tr, id, s.ID, t.N, ev, at, content); ok {
			out = append(out, sp)
			continue
		}
		turn.Events = append(turn.Events, Event{Name: string(ev.Type), Time: at.Start, Attrs: itemAttrs(ev, content)})
	}
	out[0] = turn
	return out
}

// itemSpan is the span of a command or a tool call; ok is false for
// another item.
func itemSpan(tr trace.TraceID, parent trace.SpanID, session string, n int, ev record.Event, at ItemTime, content bool) (Span, bool) {
	tool := ""
	switch ev.Type {
	case record.EventCommand:
		tool = "shell"
	case record.EventToolCall:
		tool = ev.Tool
	default:
		return Span{}, false
	}
	attrs := append([]attribute.KeyValue{OperationName.String(OpExecuteTool), ToolName.String(tool), ToolCallID.String(ev.ItemID)},
		itemAttrs(ev, content)...)
	sp := Span{Trace: tr, ID: SpanOf("item", session, n, ev.ItemID), Parent: parent, Name: OpExecuteTool + " " + tool,
		Start: at.Start, End: at.End, Attrs: attrs}
	if ev.ExitCode != nil && *ev.ExitCode != 0 {
		sp.Error = fmt.Sprintf("exit %d", *ev.ExitCode)
	} else if ev.Status == "failed" {
		sp.Error = "failed"
	}
	return sp, true
}

// itemAttrs describe an item: what it did, and its words only with content.
func itemAttrs(ev record.Event, content bool) []attribute.KeyValue {
	var a []attribute.KeyValue
	if ev.Status != "" {
		a = append(a, attribute.String("zwarm.item.status", ev.Status))
	}
	if ev.ExitCode != nil {
		a = append(a, attribute.Int("zwarm.exit_code", *ev.ExitCode))
	}
	if len(ev.Changes) > 0 {
		paths := make([]string, len(ev.Changes))
		for i, c := range ev.Changes {
			paths[i] = c.Kind + " " + c.Path
		}
		a = append(a, attribute.StringSlice("zwarm.changes", paths))
	}
	a = append(a, Words("zwarm.command", ev.Command, content)...)
	return append(a, Words("zwarm.text", ev.Text, content)...)
}

// Words is an attribute of words (a prompt, a message, output): them with
// content, else only how many bytes and lines they were.
func Words(key, s string, content bool) []attribute.KeyValue {
	switch {
	case s == "":
		return nil
	case content:
		return []attribute.KeyValue{attribute.String(key, s)}
	}
	return []attribute.KeyValue{attribute.Int(key+".bytes", len(s)), attribute.Int(key+".lines", strings.Count(s, "\n")+1)}
}

func usageAttrs(u record.Usage, cost *float64) []attribute.KeyValue {
	a := []attribute.KeyValue{InputTokens.Int64(u.InputTokens), OutputTokens.Int64(u.OutputTokens),
		attribute.Int64("zwarm.usage.cached_input_tokens", u.CachedInputTokens), attribute.Int64("zwarm.usage.total_tokens", u.TotalTokens)}
	if cost != nil {
		a = append(a, attribute.Float64("zwarm.cost_usd", *cost))
	}
	return a
}

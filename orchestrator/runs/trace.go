package runs

import (
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/zwarm/zwarm/sessions/telemetry"
)

// The run's trace (see sessions/telemetry): the run is the root span, an
// invoke_agent of zwarm; each step a span under it with the step's chat
// (the model call, its usage and cost) and its execute_tool spans; a
// worker a tool call started hangs under that call (its supervisor sends
// it). A run resumed after it stopped has a span for each resumption under
// the root, holding the steps it ran. Watchers, limits, notices, the
// person's messages and answers are events of the span they happened in.
//
// A process that died (kill -9, a crash) wrote no run_stopped: its span
// and its open step are ended when the run is resumed, at its last event,
// as interrupted. The root is its first process's span, so its status is
// that process's; the run's last is on the last resumption's. A step the
// resumption runs again (the model asked again) is a span of its own:
// step and chat span ids include the process's segment.

// TraceOf is the trace of run id.
func TraceOf(id string) trace.TraceID { return telemetry.TraceOf(id) }

// ToolSpan is the span of the tool call callID of step: the parent of the
// sessions it starts.
func ToolSpan(run string, step int, callID string) trace.SpanID {
	return telemetry.SpanOf("tool", run, step, callID)
}

// Spans builds a run's spans from its events, in order: as the run writes
// them, or read back from events.jsonl. Emit receives each span once it
// is whole.
type Spans struct {
	Emit    func(...telemetry.Span)
	Content bool

	run, model, task string
	trace            trace.TraceID
	start            time.Time
	segment          int
	parent           trace.SpanID // the segment's span
	segStart         time.Time
	segEvents        []telemetry.Event
	step             *stepSpans
	// open says the segment has not stopped; last and steps are the time
	// of the last event and the most steps seen, where a segment whose
	// process died ends.
	open  bool
	last  time.Time
	steps int
}

// stepSpans is the step being built.
type stepSpans struct {
	n, segment int
	start      time.Time
	chat       *telemetry.Span
	tools      map[string]*telemetry.Span
	events     []telemetry.Event
}

// Add takes the run's next event.
func (b *Spans) Add(ev Event) {
	if b.run != "" && ev.Type != EventResumed {
		b.last, b.steps = ev.Time, max(b.steps, ev.Step)
	}
	switch ev.Type {
	case EventStarted, EventResumed:
		b.begin(ev)
		return
	case EventStopped:
		b.stop(ev)
		return
	}
	if b.run == "" {
		return // events of a run whose start was not seen
	}
	if ev.Step > 0 && (b.step == nil || ev.Step != b.step.n) && ev.Type == EventModelCall {
		b.endStep(ev.Time)
		b.step = &stepSpans{n: ev.Step, segment: b.segment, start: ev.Time, tools: map[string]*telemetry.Span{}}
	}
	st := b.step
	if st == nil || ev.Step != st.n {
		b.segEvents = append(b.segEvents, b.event(ev))
		return
	}
	switch ev.Type {
	case EventModelCall:
		st.chat = &telemetry.Span{Trace: b.trace, ID: b.chatID(st), Parent: b.stepID(st),
			Name: telemetry.OpChat + " " + b.model, Kind: trace.SpanKindClient, Start: ev.Time, End: ev.Time,
			Attrs: []attribute.KeyValue{telemetry.OperationName.String(telemetry.OpChat), telemetry.RequestModel.String(b.model),
				attribute.Int("zwarm.step", st.n), attribute.Int("zwarm.input_items", ev.InputItems)}}
	case EventModelResponse, EventUsage, EventRetry:
		b.onChat(st, ev)
	case EventToolCall:
		sp := &telemetry.Span{Trace: b.trace, ID: ToolSpan(b.run, st.n, ev.CallID), Parent: b.stepID(st),
			Name: telemetry.OpExecuteTool + " " + ev.Tool, Start: ev.Time, End: ev.Time,
			Attrs: []attribute.KeyValue{telemetry.OperationName.String(telemetry.OpExecuteTool), telemetry.ToolName.String(ev.Tool),
				telemetry.ToolCallID.String(ev.CallID), telemetry.ToolType.String("function")}}
		sp.Attrs = append(sp.Attrs, telemetry.Words("zwarm.tool.args", string(ev.Args), b.Content)...)
		st.tools[ev.CallID] = sp
	case EventToolResult:
		sp := st.tools[ev.CallID]
		if sp == nil {
			return
		}
		delete(st.tools, ev.CallID)
		sp.End = ev.Time
		sp.Attrs = append(sp.Attrs, telemetry.Words("zwarm.tool.output", ev.Output, b.Content)...)
		if ev.IsError {
			sp.Error = "tool_error"
		}
		b.Emit(*sp)
	default:
		st.events = append(st.events, b.event(ev))
	}
}

// onChat adds the model's response, usage or a retry to the step's chat.
func (b *Spans) onChat(st *stepSpans, ev Event) {
	c := st.chat
	if c == nil {
		return
	}
	switch ev.Type {
	case EventModelResponse:
		c.End = ev.Time
		c.Attrs = append(c.Attrs, telemetry.Words("zwarm.response", ev.Text, b.Content)...)
	case EventRetry:
		c.Events = append(c.Events, telemetry.Event{Name: "retry", Time: ev.Time, Attrs: []attribute.KeyValue{
			attribute.Int("zwarm.attempt", ev.Attempt), attribute.Int("http.response.status_code", ev.Status), attribute.String("zwarm.error", ev.Error)}})
	case EventUsage:
		if ev.Usage != nil {
			c.Attrs = append(c.Attrs, telemetry.InputTokens.Int64(ev.Usage.InputTokens), telemetry.OutputTokens.Int64(ev.Usage.OutputTokens),
				attribute.Int64("zwarm.usage.cached_input_tokens", ev.Usage.CachedInputTokens))
		}
		if ev.CostUSD != nil {
			c.Attrs = append(c.Attrs, attribute.Float64("zwarm.cost_usd", *ev.CostUSD))
		}
		if c.End.Before(ev.Time) && c.End.Equal(c.Start) {
			c.End = ev.Time
		}
		b.Emit(*c)
		st.chat = nil
	}
}

// begin starts the run, or a resumption of it, first ending the segment
// before it if its process died.
func (b *Spans) begin(ev Event) {
	if b.run == "" {
		b.run, b.trace, b.start = ev.Run, TraceOf(ev.Run), ev.Time
	}
	if b.open && ev.Type == EventResumed {
		b.stop(Event{Time: b.last, RunStatus: StatusInterrupted, Step: b.steps, Reason: "its process ended without stopping the run"})
	}
	if ev.Model != "" {
		b.model = ev.Model
	}
	if ev.Task != "" {
		b.task = ev.Task
	}
	b.segment++
	b.parent, b.segStart, b.segEvents, b.open, b.last = b.segmentID(b.segment), ev.Time, nil, true, ev.Time
	if ev.Type == EventResumed {
		b.segEvents = append(b.segEvents, b.event(ev))
	}
}

// Interrupted ends what is still open of a run whose process died and
// that was not resumed since: at its last event, as a resumption ends the
// segment before it. Without it such a run had no span of its own, nor
// of the step it died in.
func (b *Spans) Interrupted() {
	b.stop(Event{Time: b.last, RunStatus: StatusInterrupted, Step: b.steps, Reason: "its process ended without stopping the run"})
}

// stop ends the step and the segment: the first segment is the run's own
// span, the root; a later one a span under it.
func (b *Spans) stop(ev Event) {
	if b.run == "" || !b.open {
		return
	}
	b.open = false
	b.endStep(ev.Time)
	sp := telemetry.Span{Trace: b.trace, ID: b.parent, Start: b.segStart, End: ev.Time, Events: b.segEvents,
		Attrs: []attribute.KeyValue{attribute.String("zwarm.run.id", b.run), attribute.String("zwarm.status", string(ev.RunStatus)),
			attribute.Int("zwarm.steps", ev.Step), telemetry.RequestModel.String(b.model)}}
	if ev.Reason != "" {
		sp.Attrs = append(sp.Attrs, attribute.String("zwarm.reason", ev.Reason))
	}
	sp.Attrs = append(sp.Attrs, telemetry.Words("zwarm.summary", ev.Summary, b.Content)...)
	if ev.RunStatus == StatusFailed {
		sp.Error = "failed"
	}
	if b.segment == 1 {
		sp.Name = telemetry.OpInvokeAgent + " zwarm"
		sp.Attrs = append(sp.Attrs, telemetry.OperationName.String(telemetry.OpInvokeAgent), telemetry.AgentName.String("zwarm"),
			telemetry.AgentID.String(b.run))
		sp.Attrs = append(sp.Attrs, telemetry.Words("zwarm.task", b.task, b.Content)...)
	} else {
		sp.Name, sp.Parent = fmt.Sprintf("resume %d", b.segment-1), b.segmentID(1)
	}
	b.Emit(sp)
}

// endStep sends the step's span and what of it is still open (a call
// whose result never came ends with the step).
func (b *Spans) endStep(at time.Time) {
	st := b.step
	if st == nil {
		return
	}
	b.step = nil
	if st.chat != nil {
		b.Emit(*st.chat)
	}
	for _, sp := range st.tools {
		sp.End, sp.Error = at, "unfinished"
		b.Emit(*sp)
	}
	b.Emit(telemetry.Span{Trace: b.trace, ID: b.stepID(st), Parent: b.parent, Name: fmt.Sprintf("step %d", st.n),
		Start: st.start, End: at, Events: st.events, Attrs: []attribute.KeyValue{attribute.Int("zwarm.step", st.n)}})
}

// stepID and chatID are the spans of a step and its model call: the
// first process's keep the ids they always had.
func (b *Spans) stepID(st *stepSpans) trace.SpanID {
	if st.segment > 1 {
		return telemetry.SpanOf("step", b.run, st.segment, st.n)
	}
	return telemetry.SpanOf("step", b.run, st.n)
}

func (b *Spans) chatID(st *stepSpans) trace.SpanID {
	if st.segment > 1 {
		return telemetry.SpanOf("chat", b.run, st.segment, st.n)
	}
	return telemetry.SpanOf("chat", b.run, st.n)
}

func (b *Spans) segmentID(k int) trace.SpanID {
	if k == 1 {
		return telemetry.SpanOf("run", b.run)
	}
	return telemetry.SpanOf("resume", b.run, k)
}

// event is a moment of the run: what a watcher, a limit, the person or a
// worker did.
func (b *Spans) event(ev Event) telemetry.Event {
	a := []attribute.KeyValue{}
	for _, kv := range [][2]string{{"zwarm.watcher", ev.Watcher}, {"zwarm.action", string(ev.Action)}, {"zwarm.limit", ev.Limit},
		{"zwarm.session.id", ev.Session}, {"zwarm.question_id", ev.QuestionID}, {"zwarm.via", ev.Via}} {
		if kv[1] != "" {
			a = append(a, attribute.String(kv[0], kv[1]))
		}
	}
	return telemetry.Event{Name: string(ev.Type), Time: ev.Time, Attrs: append(a, telemetry.Words("zwarm.text", ev.Text, b.Content)...)}
}

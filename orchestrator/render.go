package orchestrator

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
)

// LineKind says what a rendered line shows, for styling.
type LineKind int

const (
	LineHeader LineKind = iota
	LineStep
	LineReasoning
	LineMessage
	LineCall
	LineResult
	LineError
	LineNote
	LineDone
)

// Line is one line of a run's story for people: what `zwarm orchestrate`
// prints, `zwarm runs show` shows and a dashboard may draw. Text is safe
// for a terminal.
type Line struct {
	Kind   LineKind
	Indent int
	Text   string
}

// Renderer turns a run's events into lines in the order of the story: a
// step's header, what the model said, then its tool calls (the events
// come as the model's response, then the step's usage). It learns the
// step limit from the events. The zero value is ready to use.
type Renderer struct {
	MaxSteps int
	held     []Line
}

// Lines renders one event; bookkeeping events render as nothing.
func (r *Renderer) Lines(ev runs.Event) []Line {
	if ev.Limits != nil {
		r.MaxSteps = ev.Limits.MaxSteps
	}
	out := eventLines(ev, r.MaxSteps)
	switch ev.Type {
	case runs.EventModelResponse:
		r.held = append(r.held, out...)
		return nil
	case runs.EventUsage:
		out = append(out, r.held...)
		r.held = nil
	}
	return out
}

func eventLines(ev runs.Event, maxSteps int) []Line {
	l := func(k LineKind, indent int, format string, a ...any) Line {
		return Line{Kind: k, Indent: indent, Text: render.SafeLine(fmt.Sprintf(format, a...))}
	}
	switch ev.Type {
	case runs.EventStarted:
		return []Line{l(LineHeader, 0, "run %s · %s · up to %d steps · %s", record.ShortID(ev.Run), ev.Model, stepLimit(ev, maxSteps), ev.Dir),
			l(LineHeader, 0, "task: %s", render.Clip(ev.Task, 300))}
	case runs.EventResumed:
		return []Line{l(LineHeader, 0, "run %s · %s · %s", record.ShortID(ev.Run), ev.Model, ev.Text)}
	case runs.EventUsage:
		return []Line{l(LineStep, 0, "step %d/%d · %s", ev.Step, maxSteps, totalsText(ev.Totals))}
	case runs.EventModelResponse:
		var out []Line
		if ev.Reasoning != "" {
			out = append(out, l(LineReasoning, 1, "· %s", render.Clip(ev.Reasoning, 200)))
		}
		if ev.Text != "" {
			out = append(out, l(LineMessage, 1, "» %s", render.Clip(ev.Text, 300)))
		}
		return out
	case runs.EventToolCall:
		return []Line{l(LineCall, 1, "%s", strings.TrimSpace("→ "+ev.Tool+" "+ShortArgs(ev.Args)))}
	case runs.EventToolResult:
		if ev.IsError {
			return []Line{l(LineError, 2, "✗ %s", render.Clip(ev.Output, 200))}
		}
		if s := ShortResult(ev.Tool, ev.Output); s != "" {
			return []Line{l(LineResult, 2, "← %s", s)}
		}
	case runs.EventWorker:
		return []Line{l(LineNote, 2, "· %s", ev.Text)}
	case runs.EventRetry:
		text := ev.Text
		if ev.Status != 0 {
			text = fmt.Sprintf("HTTP %d: %s", ev.Status, text)
		}
		if ev.Error != "" {
			text += ": " + ev.Error
		}
		return []Line{l(LineNote, 1, "↻ %s", render.Clip(text, 200))}
	case runs.EventCompaction:
		c := ev.Compaction
		if c == nil {
			return nil
		}
		return []Line{l(LineNote, 1, "⇢ compacted the conversation: %d items dropped (%d tool calls), %s → %s tokens",
			c.DroppedItems, c.DroppedCalls, render.Tokens(c.BeforeTokens), render.Tokens(c.AfterTokens))}
	case runs.EventGuard:
		return []Line{l(LineNote, 1, "! watcher %s (%s): %s", ev.Watcher, ev.Action, render.Clip(ev.Text, 200))}
	case runs.EventLimit:
		return []Line{l(LineError, 1, "■ %s", ev.Text)}
	case runs.EventNotice:
		text := ev.Text
		if ev.Error != "" {
			text += ": " + ev.Error
		}
		return []Line{l(LineError, 1, "! %s", render.Clip(text, 300))}
	case runs.EventMessage:
		if ev.QuestionID != "" {
			return []Line{l(LineHeader, 0, "you (answering an earlier question): %s", render.Clip(ev.Text, 300))}
		}
		if ev.Turn > 0 {
			return []Line{l(LineHeader, 0, "you (turn %d): %s", ev.Turn, render.Clip(ev.Text, 300))}
		}
		return []Line{l(LineHeader, 0, "you: %s", render.Clip(ev.Text, 300))}
	case runs.EventTurnEnded:
		switch ev.Reason {
		case runs.TurnStopped:
			return []Line{l(LineNote, 1, "■ turn %d stopped before the model answered: %s", ev.Turn, ev.Text)}
		case runs.TurnFailed:
			return []Line{l(LineNote, 1, "■ turn %d ended without an answer; write again to retry", ev.Turn)}
		}
	case runs.EventRewind:
		return []Line{l(LineHeader, 0, "↶ %s", ev.Text)}
	case runs.EventQuestion:
		out := []Line{l(LineMessage, 1, "? asks: %s", render.Clip(ev.Text, 300))}
		if len(ev.Options) > 0 {
			out = append(out, l(LineNote, 2, "options: %s", render.Clip(NumberedOptions(ev.Options), 300)))
		}
		return out
	case runs.EventAnswer:
		switch ev.Via {
		case runs.AnswerTimeout:
			return []Line{l(LineNote, 2, "← no answer in time (ask_timeout): the model decides")}
		case runs.AnswerTerminal:
			return []Line{l(LineResult, 2, "← you: %s", render.Clip(ev.Text, 300))}
		}
		return []Line{l(LineResult, 2, "← you (runs answer): %s", render.Clip(ev.Text, 300))}
	case runs.EventStopped:
		out := []Line{l(LineDone, 0, "%s after %s: %s", ev.RunStatus, render.Plural(ev.Step, "step"), ev.Reason)}
		if ev.Error != "" && !strings.Contains(ev.Reason, ev.Error) {
			out = append(out, l(LineError, 0, "error: %s", ev.Error))
		}
		return out
	}
	return nil
}

// NumberedOptions lists options as a person picks them: "1) a · 2) b".
func NumberedOptions(options []string) string {
	parts := make([]string, len(options))
	for i, o := range options {
		parts[i] = fmt.Sprintf("%d) %s", i+1, o)
	}
	return strings.Join(parts, " · ")
}

func stepLimit(ev runs.Event, maxSteps int) int {
	if ev.Limits != nil {
		return ev.Limits.MaxSteps
	}
	return maxSteps
}

func totalsText(t *runs.Totals) string {
	if t == nil {
		return ""
	}
	total := t.Usage.TotalTokens + t.WorkerUsage.TotalTokens
	cost := "?"
	if t.CostUSD != nil && t.WorkerCostUSD != nil {
		c := *t.CostUSD + *t.WorkerCostUSD
		cost = render.Cost(&c)
	}
	text := fmt.Sprintf("%s (model %s, workers %s) · %s tokens", cost, render.Cost(t.CostUSD), render.Cost(t.WorkerCostUSD), render.Tokens(total))
	if n := t.WorkersRunning + t.WorkersDone + t.WorkersFailed; n > 0 {
		text += fmt.Sprintf(" · workers %d running, %d done", t.WorkersRunning, t.WorkersDone)
		if t.WorkersFailed > 0 {
			text += fmt.Sprintf(", %d failed", t.WorkersFailed)
		}
	}
	return text
}

// ShortArgs renders tool arguments on one line: key=value, values clipped.
func ShortArgs(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return render.Clip(string(args), 120)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// The main argument first: what the call is about.
	rank := func(k string) int {
		switch k {
		case "task", "cmd", "session_id", "session_ids", "message", "summary", "chars", "question":
			return 0
		}
		return 1
	}
	sort.Slice(keys, func(i, j int) bool {
		if rank(keys[i]) != rank(keys[j]) {
			return rank(keys[i]) < rank(keys[j])
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+shortValue(k, m[k]))
	}
	return render.Clip(strings.Join(parts, " "), 160)
}

func shortValue(key string, v any) string {
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(key, "session_id") && len(x) == 36 {
			return record.ShortID(x)
		}
		return fmt.Sprintf("%q", render.Clip(x, 60))
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = shortValue(key, e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

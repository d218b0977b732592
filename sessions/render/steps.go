package render

import (
	"encoding/json"
	"github.com/zwarm/zwarm/sessions/record"
	"strconv"
	"strings"
)

// Kind says what a line shows, for styling.
type Kind int

const (
	Turn Kind = iota
	User
	Reasoning
	Command
	Output
	File
	Todo
	Tool
	Message
	Error
	Done
	Raw
)

// Line is one rendered line: safe to print, without a newline. Indent is
// the nesting depth.
type Line struct {
	Kind   Kind
	Indent int
	Text   string
}

// String is the line as plain text, indented by two spaces a level.
func (l Line) String() string { return strings.Repeat("  ", l.Indent) + l.Text }

// Text joins lines as plain text, one per line.
func Text(lines []Line) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Of renders one event as it stands, in a turn that is still running.
func Of(ev record.Event) []Line { return Step(ev, nil) }

// Step renders one step of a turn. ended is the turn's record once it has
// ended, nil while it runs: an item that never finished is then shown as
// cut short (a killed turn's last command reads "killed", not "running").
// Bookkeeping events (thread and turn starts, the turn's completion, whose
// usage the turn's end line shows per turn) render as nothing.
func Step(ev record.Event, ended *record.Turn) []Line { return appendStep(nil, &ev, ended) }

// appendStep appends Step's lines to out, without copying the event or
// making a slice for each step (a turn has hundreds of thousands).
func appendStep(out []Line, ev *record.Event, ended *record.Turn) []Line {
	l := func(k Kind, text string) Line { return Line{Kind: k, Indent: 1, Text: text} }
	switch ev.Type {
	case record.EventReasoning:
		return append(out, l(Reasoning, "· "+Clip(ev.Text, 300)))
	case record.EventCommand:
		return appendCommand(out, ev, ended)
	case record.EventFileChange:
		for _, c := range ev.Changes {
			out = append(out, l(File, "✎ "+Clip(c.Kind, 20)+" "+Clip(c.Path, 300)))
		}
		if ev.Text != "" {
			out = append(out, Line{Kind: Error, Indent: 2, Text: "! " + Clip(ev.Text, 300)})
		}
		return out
	case record.EventTodoList:
		return append(out, plan(ev.Todos)...)
	case record.EventToolCall:
		return appendToolCall(out, ev)
	case record.EventToolResult:
		if ev.Text != "" {
			return append(out, Line{Kind: Error, Indent: 2, Text: "← ! " + Clip(ev.Text, 300)})
		}
		return appendOutput(out, "← ", ev.Output)
	case record.EventMessage:
		for _, m := range Lines(ev.Text) {
			out = append(out, l(Message, "» "+m))
		}
		return out
	case record.EventError:
		return append(out, l(Error, "! "+Clip(ErrorText(ev.Text), 1000)))
	case record.EventRetry:
		return append(out, l(Reasoning, "↻ "+Clip(ev.Text, 300)))
	case record.EventTurnFailed:
		if interrupted(ended) {
			// What the agent says of a turn zwarm stopped for a
			// follow-up (claude: error_during_execution) is no failure.
			return append(out, l(Reasoning, "■ interrupted: "+Clip(ErrorText(ev.Text), 300)))
		}
		return append(out, l(Error, "✗ turn failed: "+Clip(ErrorText(ev.Text), 1000)))
	case record.EventRaw:
		return append(out, l(Raw, "| "+Clip(ev.Text, 300)))
	}
	return out
}

func appendCommand(out []Line, ev *record.Event, ended *record.Turn) []Line {
	var state string
	switch {
	case ev.ExitCode != nil:
		state = "exit " + strconv.Itoa(*ev.ExitCode)
	case ev.Phase != record.PhaseStarted && ev.Phase != record.PhaseUpdated && ev.Status == "failed" && interrupted(ended):
		state = "interrupted" // the agent fails the command the interrupt cut short
	case ev.Phase != record.PhaseStarted && ev.Phase != record.PhaseUpdated:
		state = Clip(orElse(ev.Status, "no exit code"), 40)
	case ended == nil:
		state = "running"
	case ended.Status() == record.StatusKilled:
		state = "killed"
	default:
		state = "did not finish"
	}
	// A command is shown as it ran: its newlines escaped, not made spaces
	// ("echo ok\nrm -rf x" runs two commands, and must not read as one).
	out = append(out, Line{Kind: Command, Indent: 1, Text: "$ " + clipRunes(SafeLine(ev.Command), 300) + "  (" + state + ")"})
	if state == "running" || strings.TrimSpace(ev.Output) == "" {
		return out
	}
	excerpt := Excerpt(ev.Output, 4, 2)
	// One string holds every output line's text, each line a slice of it:
	// a long turn's commands were a string each line.
	size := 0
	for i, o := range excerpt {
		excerpt[i] = clipRunes(o, 500)
		size += len(outputMark) + len(excerpt[i])
	}
	var b strings.Builder
	b.Grow(size)
	for _, o := range excerpt {
		b.WriteString(outputMark)
		b.WriteString(o)
	}
	all := b.String()
	for _, o := range excerpt {
		n := len(outputMark) + len(o)
		out = append(out, Line{Kind: Output, Indent: 2, Text: all[:n]})
		all = all[n:]
	}
	return out
}

// outputMark starts each line of a command's output.
const outputMark = "│ "

// appendOutput appends what a tool returned: an excerpt of its text.
func appendOutput(out []Line, mark, s string) []Line {
	s = ToolOutput(s)
	if strings.TrimSpace(s) == "" {
		return out
	}
	for i, o := range Excerpt(s, 3, 1) {
		prefix := "  "
		if i == 0 {
			prefix = mark
		}
		out = append(out, Line{Kind: Output, Indent: 2, Text: prefix + clipRunes(o, 300)})
	}
	return out
}

func appendToolCall(out []Line, ev *record.Event) []Line {
	if lines, ok := taskTool(ev); ok {
		return append(out, lines...)
	}
	out = append(out, Line{Kind: Tool, Indent: 1, Text: strings.TrimRight("→ "+Clip(ev.Tool, 80)+" "+Clip(ev.Input, 160), " ")})
	out = appendOutput(out, "← ", ev.Output)
	if ev.Text != "" {
		out = append(out, Line{Kind: Error, Indent: 2, Text: "! " + Clip(ErrorText(ev.Text), 300)})
	}
	return out
}

// plan renders a plan as a checklist.
func plan(todos []record.Todo) []Line {
	var out []Line
	for _, t := range todos {
		box := "☐"
		if t.Completed {
			box = "☑"
		}
		out = append(out, Line{Kind: Todo, Indent: 1, Text: box + " " + Clip(t.Text, 200)})
	}
	return out
}

// taskTool renders Claude Code's plan tools (TaskCreate, TaskUpdate) as
// plan entries when they arrive as plain tool calls.
func taskTool(ev *record.Event) ([]Line, bool) {
	if ev.Tool != "TaskCreate" && ev.Tool != "TaskUpdate" {
		return nil, false
	}
	var in struct {
		Subject string `json:"subject"`
		TaskID  string `json:"taskId"`
		Status  string `json:"status"`
	}
	if json.Unmarshal([]byte(ev.Input), &in) != nil {
		return nil, false
	}
	if ev.Tool == "TaskCreate" {
		return []Line{{Kind: Todo, Indent: 1, Text: "☐ " + Clip(in.Subject, 200)}}, true
	}
	box := "☐"
	switch in.Status {
	case "completed":
		box = "☑"
	case "in_progress":
		box = "◐"
	}
	what := "task " + Clip(in.TaskID, 20)
	if in.Subject != "" {
		what = Clip(in.Subject, 200)
	}
	if in.Status != "" {
		what += " (" + Clip(strings.ReplaceAll(in.Status, "_", " "), 20) + ")"
	}
	return []Line{{Kind: Todo, Indent: 1, Text: box + " " + what}}, true
}

func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s // no more runes than bytes
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func orElse(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// interrupted reports whether the turn, ended, was interrupted.
func interrupted(ended *record.Turn) bool {
	return ended != nil && ended.Status() == record.StatusInterrupted
}

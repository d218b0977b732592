// Package steps renders normalized agent events as human-readable lines,
// one way for every view: the dashboard's detail pane, `zwarm logs` and
// `zwarm show`. It returns plain text tagged with a kind, so each view
// styles it its own way.
package render

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/zwarm/zwarm/sessions"
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

// Line is one rendered line. Indent is the nesting depth.
type Line struct {
	Kind   Kind
	Indent int
	Text   string
}

// TurnHeader is the separator that starts a turn.
func TurnHeader(t sessions.Turn) Line {
	what := "task"
	if t.N > 1 {
		what = "follow-up"
	}
	return Line{Kind: Turn, Text: fmt.Sprintf("── turn %d · %s ──", t.N, what)}
}

// Prompt is the user's message that started a turn.
func Prompt(t sessions.Turn) []Line {
	var out []Line
	for _, l := range strings.Split(strings.TrimRight(t.Prompt, "\n"), "\n") {
		out = append(out, Line{Kind: User, Indent: 1, Text: "> " + l})
	}
	return out
}

// TurnEnd sums up an ended turn.
func TurnEnd(t sessions.Turn, cost string) Line {
	text := "── " + string(t.Status)
	if t.ExitCode != nil {
		text += fmt.Sprintf(", exit %d", *t.ExitCode)
	}
	text += fmt.Sprintf(", %d tokens, %s", t.Usage.TotalTokens, cost)
	if t.Error != "" {
		text += ": " + Clip(t.Error, 200)
	}
	kind := Done
	if t.Status != sessions.StatusCompleted {
		kind = Error
	}
	return Line{Kind: kind, Indent: 1, Text: text}
}

// Of renders one event. Events that are bookkeeping render as nothing.
func Of(ev sessions.Event) []Line {
	l := func(k Kind, text string) Line { return Line{Kind: k, Indent: 1, Text: text} }
	switch ev.Type {
	case sessions.EventReasoning:
		return []Line{l(Reasoning, "· "+Clip(ev.Text, 300))}
	case sessions.EventCommand:
		var head string
		switch {
		case ev.Phase == sessions.PhaseStarted:
			head = fmt.Sprintf("$ %s  (running)", ev.Command)
		case ev.ExitCode != nil:
			head = fmt.Sprintf("$ %s  (exit %d)", ev.Command, *ev.ExitCode)
		default:
			head = fmt.Sprintf("$ %s  (%s)", ev.Command, orElse(ev.Status, "no exit code"))
		}
		out := []Line{l(Command, head)}
		if ev.Phase != sessions.PhaseStarted && strings.TrimSpace(ev.Output) != "" {
			for _, o := range Excerpt(ev.Output, 4, 2) {
				out = append(out, Line{Kind: Output, Indent: 2, Text: "│ " + o})
			}
		}
		return out
	case sessions.EventFileChange:
		var out []Line
		for _, c := range ev.Changes {
			out = append(out, l(File, fmt.Sprintf("✎ %s %s", c.Kind, c.Path)))
		}
		return out
	case sessions.EventTodoList:
		var out []Line
		for _, t := range ev.Todos {
			box := "☐"
			if t.Completed {
				box = "☑"
			}
			out = append(out, l(Todo, box+" "+t.Text))
		}
		return out
	case sessions.EventToolCall:
		out := []Line{l(Tool, fmt.Sprintf("→ %s %s", ev.Tool, Clip(ev.Input, 160)))}
		if ev.Text != "" {
			out = append(out, Line{Kind: Error, Indent: 2, Text: "! " + Clip(ev.Text, 200)})
		}
		return out
	case sessions.EventToolResult:
		if ev.Text != "" {
			return []Line{{Kind: Error, Indent: 2, Text: "← ! " + Clip(ev.Text, 200)}}
		}
		return []Line{{Kind: Output, Indent: 2, Text: "← " + Clip(ev.Output, 200)}}
	case sessions.EventMessage:
		var out []Line
		for _, m := range strings.Split(strings.TrimRight(ev.Text, "\n"), "\n") {
			out = append(out, l(Message, "» "+m))
		}
		return out
	case sessions.EventError:
		return []Line{l(Error, "! "+Clip(ev.Text, 300))}
	case sessions.EventRetry:
		return []Line{l(Reasoning, "↻ "+Clip(ev.Text, 200))}
	case sessions.EventTurnFailed:
		return []Line{l(Error, "✗ turn failed: "+Clip(ev.Text, 300))}
	case sessions.EventTurnCompleted:
		if ev.Usage != nil {
			return []Line{l(Done, fmt.Sprintf("✓ turn completed (%d in, %d out)", ev.Usage.InputTokens, ev.Usage.OutputTokens))}
		}
		return []Line{l(Done, "✓ turn completed")}
	case sessions.EventRaw:
		return []Line{l(Raw, "| "+Clip(ev.Text, 200))}
	}
	return nil
}

// Clip shortens s to n runes on one line.
func Clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Excerpt keeps the first head and last tail lines of a long output.
func Excerpt(s string, head, tail int) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= head+tail {
		return lines
	}
	out := append([]string{}, lines[:head]...)
	out = append(out, fmt.Sprintf("… %d more lines …", len(lines)-head-tail))
	return append(out, lines[len(lines)-tail:]...)
}

func orElse(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

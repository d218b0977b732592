package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
)

// Bounds of get_trajectory's text, in bytes. The compact form keeps the
// newest steps that fit; the full one shows each step at length.
const (
	compactTrajectoryBytes = 6000
	compactStepBytes       = 400
	fullTrajectoryBytes    = 60000
	fullStepBytes          = 4000
)

func (w *workers) trajectoryTool() Tool {
	schema := object(map[string]prop{
		"session_id": str("The worker's id (or a unique prefix)."),
		"full":       boolean("Every step at length instead of the compact summary of the newest steps (default false)."),
	}, "session_id")
	return Tool{
		Name: "get_trajectory",
		Description: "What a worker did, step by step: its reasoning, commands with exit codes and output, file changes, " +
			"tool calls and messages, turn by turn. Compact unless full is true.",
		Schema: schema,
		Handler: func(ctx context.Context, args json.RawMessage) Result {
			var a struct {
				SessionID string `json:"session_id"`
				Full      bool   `json:"full"`
			}
			if err := decode("get_trajectory", args, &a, schema); err != nil {
				return Errorf("%v", err)
			}
			s, err := w.resolve(ctx, a.SessionID)
			if err != nil {
				return Errorf("%v", err)
			}
			s, turns, err := w.opt.Sessions.Transcript(ctx, s.ID)
			if err != nil {
				return Errorf("cannot read the trajectory of %s: %v", a.SessionID, err)
			}
			w.seen.Mark(s)
			return Result{Text: Trajectory(s, turns, a.Full)}
		},
	}
}

// Trajectory renders a worker's steps for a model: compact (one short line
// per step, newest steps within a bound) or full (each step at length,
// within a larger bound). Older lines are dropped first, and the text says
// how many.
func Trajectory(s *record.Session, turns []watch.TurnLog, full bool) string {
	var lines []string
	n := 0
	for _, tl := range turns {
		what := "task"
		if tl.Turn.N > 1 {
			what = "follow-up"
		}
		lines = append(lines, fmt.Sprintf("── turn %d (%s, %s) ── %s", tl.Turn.N, what, tl.Turn.Status(), oneLine(tl.Turn.Prompt, 300)))
		for _, ev := range record.Steps(tl.Events) {
			text := stepText(ev, full)
			if text == "" {
				continue
			}
			if full {
				// The compact form is render's, made safe; this one is
				// the agent's text as written.
				text = render.Safe(text)
			}
			n++
			lines = append(lines, fmt.Sprintf("#%d %s", n, text))
		}
		if tl.Turn.Error != "" {
			lines = append(lines, "   turn error: "+oneLine(tl.Turn.Error, 500))
		}
	}
	head := fmt.Sprintf("worker %s · %s · %d turns · %d steps", s.ID, s.Status(), s.Turn, n)
	bound := compactTrajectoryBytes
	if full {
		bound = fullTrajectoryBytes
	}
	return head + "\n" + newest(lines, bound-len(head), full)
}

// newest keeps the last lines that fit in bound bytes.
func newest(lines []string, bound int, full bool) string {
	size, from := 0, len(lines)
	for from > 0 && size+len(lines[from-1])+1 <= bound {
		from--
		size += len(lines[from]) + 1
	}
	out := strings.Join(lines[from:], "\n")
	if from > 0 {
		more := "get_trajectory with full=true shows more"
		if full {
			more = "the full trajectory is longer than one answer"
		}
		out = fmt.Sprintf("… %d earlier lines left out (%s)\n%s", from, more, out)
	}
	return out
}

// stepText is one step: render's one-line form, or at length.
func stepText(ev record.Event, full bool) string {
	if !full {
		ls := render.Of(ev)
		parts := make([]string, 0, len(ls))
		for _, l := range ls {
			parts = append(parts, strings.TrimSpace(l.Text))
		}
		// One short line: a step as long as the bound (a final report
		// of many lines) would leave no room for any other.
		return clip(strings.Join(parts, " ⏎ "), compactStepBytes)
	}
	switch ev.Type {
	case record.EventReasoning:
		return "· " + clip(ev.Text, fullStepBytes)
	case record.EventMessage:
		return "» " + clip(ev.Text, fullStepBytes)
	case record.EventCommand:
		head := "$ " + ev.Command
		switch {
		case ev.ExitCode != nil:
			head += fmt.Sprintf("  (exit %d)", *ev.ExitCode)
		case ev.Status != "":
			head += "  (" + ev.Status + ")"
		}
		if out := strings.TrimRight(ev.Output, "\n"); out != "" {
			head += "\n" + headTail(out, fullStepBytes)
		}
		return head
	case record.EventToolCall:
		text := fmt.Sprintf("→ %s %s", ev.Tool, clip(ev.Input, fullStepBytes/2))
		if ev.Output != "" {
			text += "\n← " + headTail(ev.Output, fullStepBytes/2)
		}
		if ev.Text != "" {
			text += "\n! " + clip(ev.Text, 1000)
		}
		return text
	case record.EventToolResult:
		if ev.Text != "" {
			return "← ! " + clip(ev.Text, 1000)
		}
		return "← " + headTail(ev.Output, fullStepBytes)
	}
	ls := render.Of(ev)
	parts := make([]string, 0, len(ls))
	for _, l := range ls {
		parts = append(parts, strings.TrimSpace(l.Text))
	}
	// Bounded as every other step is: a change of 20,000 files would
	// not fit the answer, and the newest steps are kept whole or not
	// at all.
	return headTail(strings.Join(parts, "\n"), fullStepBytes)
}

// headTail keeps the first and last halves of a long text.
func headTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	h := prefix(s, n/2)
	tail := s[len(s)-n/2:]
	for len(tail) > 0 && tail[0]&0xC0 == 0x80 {
		tail = tail[1:]
	}
	return fmt.Sprintf("%s\n… [%d bytes left out] …\n%s", h, len(s)-len(h)-len(tail), tail)
}

func oneLine(s string, n int) string { return render.Clip(s, n) }

package render

import (
	"fmt"
	"github.com/zwarm/zwarm/sessions/record"
	"reflect"
	"strings"
)

// TurnHeader is the separator that starts a turn.
func TurnHeader(t record.Turn) Line {
	what := "task"
	if t.N > 1 {
		what = "follow-up"
	}
	return Line{Kind: Turn, Text: fmt.Sprintf("── turn %d · %s ──", t.N, what)}
}

// Prompt is the user's message that started a turn.
func Prompt(t record.Turn) []Line {
	var out []Line
	for _, l := range Lines(t.Prompt) {
		out = append(out, Line{Kind: User, Indent: 1, Text: "> " + l})
	}
	return out
}

// TurnLines renders a whole turn the one way show, logs and the dashboard
// agree on: its header, the prompt, one step per item in its latest state,
// and once it has ended, how (TurnEnd).
func TurnLines(t record.Turn, events []record.Event, stderrTail string) []Line {
	var out []Line
	w := NewTurnWriter(t, func(l []Line) { out = append(out, l...) })
	for _, ev := range events {
		w.Event(ev)
	}
	w.End(stderrTail)
	return out
}

// TurnWriter renders a turn as TurnLines does, from its events as they are
// read, so a turn of any size is shown without holding it: lines go to
// emit as soon as the steps they show are complete (record.StepFolder).
type TurnWriter struct {
	t     record.Turn
	ended *record.Turn
	emit  func([]Line)
	fold  record.StepFolder
	shown map[string]bool // failure texts already shown as steps
	step  func(record.Event)
	lines []Line // a step's, handed to emit and then reused
}

// NewTurnWriter starts a turn: its header and prompt go out at once. t is
// the turn's record as it stands; an ended turn renders its unfinished
// items as cut short. emit may keep the lines it is given, but not the
// slice that holds them: the writer reuses it.
func NewTurnWriter(t record.Turn, emit func([]Line)) *TurnWriter {
	w := &TurnWriter{t: t, emit: emit, shown: map[string]bool{}}
	if t.EndedAt != nil {
		w.ended = &w.t
	}
	w.step = func(ev record.Event) {
		if w.lines = appendStep(w.lines[:0], &ev, w.ended); len(w.lines) > 0 {
			w.emit(w.lines)
		}
		if ev.Type == record.EventTurnFailed || ev.Type == record.EventError {
			w.shown[strings.TrimSpace(ev.Text)] = true
		}
	}
	emit(append([]Line{TurnHeader(t)}, Prompt(t)...))
	return w
}

// Event takes the turn's next event.
func (w *TurnWriter) Event(ev record.Event) { w.fold.Add(ev, w.step) }

// Ended gives the writer the turn's record as it ended, when it was
// started from the record of the turn still running: End then says how
// the turn ended, and what it left unfinished shows as cut short.
func (w *TurnWriter) Ended(t record.Turn) {
	if t.EndedAt != nil {
		w.t = t
		w.ended = &w.t
	}
}

// End renders what is still waiting and, if the turn has ended, how; a
// turn still running shows its notes so far.
func (w *TurnWriter) End(stderrTail string) {
	w.fold.Flush(w.step)
	if w.ended != nil {
		w.emit(turnEnd(w.t, stderrTail, w.shown))
	} else if notes := turnNotes(w.t, 1); len(notes) > 0 {
		w.emit(notes)
	}
}

// turnNotes are what the supervisor had to do to keep recording a turn
// (its turn file was removed while it ran, say), one line each. They come
// from meta.json, which anyone may have written: escaped like agent text.
func turnNotes(t record.Turn, indent int) []Line {
	var out []Line
	for _, n := range t.Notes {
		out = append(out, Line{Kind: Raw, Indent: indent, Text: "note: " + clipRunes(SafeLine(n), 500)})
	}
	return out
}

// TurnEnd sums up an ended turn: status, exit code, this turn's own usage
// and cost, the supervisor's notes on it; for a turn that did not
// complete, the reason and the end of what the agent wrote to stderr (when
// the reason does not already hold it).
func TurnEnd(t record.Turn, stderrTail string) []Line {
	return turnEnd(t, stderrTail, nil)
}

func turnEnd(t record.Turn, stderrTail string, shown map[string]bool) []Line {
	parts := []string{string(t.Status())}
	if x := ExitText(t.Status(), t.ExitCode); x != "" {
		parts = append(parts, x)
	}
	if u := t.Spent(); u.IsZero() && t.Status() != record.StatusCompleted {
		parts = append(parts, "no usage reported")
	} else {
		parts = append(parts, fmt.Sprintf("%s tokens (%s in, %s out)", Tokens(u.TotalTokens),
			Tokens(u.InputTokens), Tokens(u.OutputTokens)), Cost(t.CostUSD))
	}
	kind := Done
	if t.Status() != record.StatusCompleted {
		kind = Error
	}
	out := []Line{{Kind: kind, Indent: 1, Text: "── " + strings.Join(parts, " · ")}}
	out = append(out, turnWork(t)...)
	out = append(out, turnNotes(t, 2)...)
	if t.Status() == record.StatusCompleted {
		return out
	}
	reason := strings.TrimSpace(t.Error)
	if reason != "" && !shown[reason] {
		for i, l := range Lines(ErrorText(reason)) {
			if i == 20 {
				out = append(out, Line{Kind: Error, Indent: 2, Text: "…"})
				break
			}
			out = append(out, Line{Kind: Error, Indent: 2, Text: l})
		}
	}
	tail := strings.TrimSpace(stderrTail)
	if tail != "" && !strings.Contains(reason, tail) {
		out = append(out, Line{Kind: Output, Indent: 2, Text: "stderr:"})
		for _, l := range Excerpt(tail, 0, 10) {
			out = append(out, Line{Kind: Output, Indent: 2, Text: "│ " + clipRunes(l, 500)})
		}
	}
	return out
}

// Stream renders the events of a running turn as they arrive, for a
// followed log. What runs now is printed when it starts (a command, a tool
// call, a plan); when an item ends, only what is new is printed: the
// command with its exit code and output, the tool's result. A turn that
// has ended is rendered by TurnLines instead, like show.
//
// It remembers only the items still open (and each plan's latest steps),
// so following a turn of millions of commands holds none of them.
type Stream struct {
	open  map[string]bool          // commands and tool calls printed, not yet ended
	plans map[string][]record.Todo // each plan's steps as last printed
}

// Event returns the lines to print for ev now, possibly none.
func (s *Stream) Event(ev record.Event) []Line {
	if s.open == nil {
		s.open, s.plans = map[string]bool{}, map[string][]record.Todo{}
	}
	if ev.ItemID == "" || ev.Phase == "" {
		return Of(ev)
	}
	key := string(ev.Type) + "/" + ev.ItemID
	switch ev.Type {
	case record.EventCommand, record.EventToolCall:
		printed := s.open[key]
		if ev.Phase == record.PhaseUpdated || printed && ev.Phase == record.PhaseStarted {
			return nil
		}
		if ev.Phase == record.PhaseCompleted {
			delete(s.open, key)
		} else {
			s.open[key] = true
		}
		if printed && ev.Type == record.EventToolCall {
			lines := Of(ev)
			return lines[1:] // the call was printed when it started
		}
		return Of(ev)
	case record.EventTodoList:
		if prev, printed := s.plans[ev.ItemID]; printed && reflect.DeepEqual(prev, ev.Todos) {
			return nil
		}
		s.plans[ev.ItemID] = ev.Todos
		return Of(ev)
	}
	if ev.Phase != record.PhaseCompleted {
		return nil // messages, reasoning and file changes are shown done
	}
	return Of(ev)
}

// Bounded is lines as plain text of at most max bytes, for a model's
// context: when they do not fit, the first and the last lines are kept
// (how the work began and where it stands) and a line says how many were
// left out between them.
func Bounded(lines []Line, max int) string {
	full := Text(lines)
	if len(full) <= max {
		return full
	}
	var head, tail []string
	used := 0
	budget := max - 40 // the marker line
	for i, j := 0, len(lines)-1; i <= j; {
		if l := lines[j].String() + "\n"; used+len(l) <= budget && len(tail) <= len(head) {
			tail = append(tail, l)
			used += len(l)
			j--
			continue
		}
		if l := lines[i].String() + "\n"; used+len(l) <= budget {
			head = append(head, l)
			used += len(l)
			i++
			continue
		}
		break
	}
	var b strings.Builder
	for _, l := range head {
		b.WriteString(l)
	}
	fmt.Fprintf(&b, "… %d lines left out …\n", len(lines)-len(head)-len(tail))
	for k := len(tail) - 1; k >= 0; k-- {
		b.WriteString(tail[k])
	}
	return b.String()
}

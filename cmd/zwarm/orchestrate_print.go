package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/render"
)

// stepPrinter prints a run's events as they happen: its steps for people
// (the orchestrator's Renderer), or with --json the events themselves, one
// a line (--jq filters each). On a terminal, and only there, the shared
// progress shows on stderr what the run is waiting for: the model, or a
// tool.
type stepPrinter struct {
	io     *cli.Streams
	out    io.Writer
	json   *cli.JSONFlags // nil or off: steps for people
	render orchestrator.Renderer
	spin   bool
	prog   *cli.Progress
	jqErr  bool // a --jq error was reported
	// prompting: the run asks its questions on this terminal, where the
	// prompt takes the spinner's place; hint is how else to answer.
	prompting bool
	hint      string
	// pilot: a reply without a tool call is the model's answer, printed
	// whole by answer, not clipped among the steps; echoed: the person's
	// turns are on the terminal where they typed them.
	pilot, echoed bool
}

func newStepPrinter(s *cli.Streams, out io.Writer, j *cli.JSONFlags, maxSteps int, spin bool) *stepPrinter {
	return &stepPrinter{io: s, out: out, json: j, render: orchestrator.Renderer{MaxSteps: maxSteps}, spin: spin}
}

func (p *stepPrinter) asJSON() bool { return p.json != nil && p.json.On() }

// event takes one event of the run, on the run's goroutine.
func (p *stepPrinter) event(ev runs.Event) {
	if p.asJSON() {
		p.writeJSON(ev)
		return
	}
	switch ev.Type {
	case runs.EventModelCall:
		p.render.Lines(ev) // only learns from it
		p.await(fmt.Sprintf("step %d/%d · the model is thinking", ev.Step, p.render.MaxSteps))
		return
	case runs.EventStopped:
		p.render.Lines(ev)
		return // outcome prints the end
	case runs.EventModelResponse:
		if p.pilot && !hasCall(ev.Items) {
			ev.Text = "" // the answer: the turn's end prints it
		}
	case runs.EventMessage:
		if p.echoed && ev.Turn > 0 {
			return
		}
	case runs.EventTurnEnded:
		if ev.Reason == runs.TurnStopped && p.io.OutTTY {
			// The terminal echoed the Ctrl+C that stopped it where the
			// cursor was: that line goes.
			p.stopProgress()
			io.WriteString(p.out, "\r\x1b[K")
		}
	}
	lines := p.render.Lines(ev)
	if len(lines) == 0 {
		return
	}
	p.stopProgress()
	writeRunLines(p.io, p.out, lines)
	switch {
	case ev.Type == runs.EventToolCall && ev.Tool == "ask_user":
		// Its question comes next.
	case ev.Type == runs.EventToolCall:
		p.await(fmt.Sprintf("step %d/%d · %s", ev.Step, p.render.MaxSteps, ev.Tool))
	case ev.Type == runs.EventQuestion && !p.prompting:
		p.await(fmt.Sprintf("step %d/%d · waiting for your answer: %s \"...\"", ev.Step, p.render.MaxSteps, p.hint))
	}
}

// await shows what the run waits for until the next line is printed.
func (p *stepPrinter) await(what string) {
	p.stopProgress()
	if p.spin {
		p.prog = cli.StartProgress(p.io, what)
	}
}

func (p *stepPrinter) stopProgress() {
	p.prog.Stop()
	p.prog = nil
}

func (p *stepPrinter) writeJSON(ev runs.Event) {
	if p.json.JQ == "" {
		b, err := json.Marshal(ev)
		if err == nil {
			p.out.Write(append(b, '\n'))
		}
		return
	}
	if err := p.json.Write(p.out, ev); err != nil && !p.jqErr {
		p.jqErr = true
		fmt.Fprintln(p.io.ErrOut, "zwarm:", err)
	}
}

func (p *stepPrinter) close() { p.stopProgress() }

// hasCall says a model response's items (itemTypes) hold a tool call.
func hasCall(items []string) bool {
	for _, it := range items {
		if strings.Contains(it, ":") {
			return true
		}
	}
	return false
}

// answer prints the model's answer that ended a pilot turn, whole.
func (p *stepPrinter) answer(text string) {
	p.stopProgress()
	var lines []orchestrator.Line
	for _, l := range render.Lines(text) {
		lines = append(lines, orchestrator.Line{Kind: orchestrator.LineMessage, Text: l})
	}
	if len(lines) == 0 {
		lines = append(lines, orchestrator.Line{Kind: orchestrator.LineNote, Text: "(the model answered without a word)"})
	}
	io.WriteString(p.out, "\n")
	writeRunLines(p.io, p.out, lines)
	io.WriteString(p.out, "\n")
}

// outcome prints how the run ended and, unless it completed, how to
// continue it (on stderr: it is advice, not output; "" gives none).
func (p *stepPrinter) outcome(rec *runs.Record, resume string) {
	if !p.asJSON() {
		status := p.io.Paint(runStatusColor(rec.Status), string(rec.Status))
		head := fmt.Sprintf("%s after %s · %s · %s tokens · %s", status, render.Plural(rec.Steps, "step"), runCost(rec),
			render.Tokens(rec.TotalTokens()), render.Plural(len(rec.Workers), "worker"))
		text := rec.StopReason
		if rec.Status == runs.StatusCompleted {
			text = rec.Summary // it ends with the account of the changes
		} else if changes := orchestrator.ChangesText(rec.Changes); changes != "" {
			text += "\n\n" + changes
		}
		var b strings.Builder
		b.WriteString("\n" + head + "\n")
		for _, l := range render.Lines(text) {
			for _, piece := range fitLine(p.io, l, "") {
				b.WriteString(piece + "\n")
			}
		}
		io.WriteString(p.out, b.String())
	}
	if rec.Status != runs.StatusCompleted && resume != "" {
		fmt.Fprintf(p.io.ErrOut, "resume with: %s\n", resume)
	}
}

// runCost is the cost of a run and its workers, for people.
func runCost(rec *runs.Record) string {
	c, known := rec.TotalCost()
	return render.LaterCost(rec.CostNotYet(), c, known)
}

// writeRunLines prints a run's rendered lines in one write: on a terminal
// wrapped to its width and coloured by kind, piped as they are.
func writeRunLines(s *cli.Streams, w io.Writer, lines []orchestrator.Line) {
	var b strings.Builder
	for _, l := range lines {
		indent := strings.Repeat("  ", l.Indent)
		for _, piece := range fitLine(s, l.Text, indent) {
			text := strings.TrimLeft(piece, " ")
			b.WriteString(piece[:len(piece)-len(text)] + s.Paint(lineColor(l.Kind), text) + "\n")
		}
	}
	io.WriteString(w, b.String())
}

func lineColor(k orchestrator.LineKind) string {
	switch k {
	case orchestrator.LineHeader, orchestrator.LineStep, orchestrator.LineDone:
		return cli.Bold
	case orchestrator.LineReasoning, orchestrator.LineNote:
		return cli.Dim
	case orchestrator.LineCall:
		return cli.Cyan
	case orchestrator.LineError:
		return cli.Red
	}
	return ""
}

func runStatusColor(st runs.Status) string {
	switch st {
	case runs.StatusRunning:
		return cli.Cyan
	case runs.StatusWaiting:
		return cli.Blue
	case runs.StatusCompleted:
		return cli.Green
	case runs.StatusFailed:
		return cli.Red
	}
	return cli.Yellow
}

// fitLine is text after indent as the lines that show it: piped, one line
// as it is; on a terminal, pieces that fit its width (render.Wrap).
func fitLine(s *cli.Streams, text, indent string) []string {
	if !s.OutTTY {
		return []string{indent + text}
	}
	return render.Wrap(text, indent, s.Width)
}

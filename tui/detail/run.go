package detail

import (
	"fmt"
	"strings"

	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/tui/styles"
)

// The run the pane shows, when it shows one: its steps as `zwarm
// orchestrate` prints them, from its events.
type runView struct {
	rec    *runs.Record
	tokens int64    // with its workers
	cost   *float64 // with its workers; nil: unknown
	render orchestrator.Renderer
	// thinking is the step whose model call has no answer yet, 0 if none.
	thinking int
}

// ResetRun shows run rec, from nothing; key is its row's. The record gives
// the title, and the step limit until the events say it.
func (m *Model) ResetRun(key string, rec *runs.Record) {
	m.Reset(key)
	m.run = &runView{rec: rec, render: orchestrator.Renderer{MaxSteps: rec.Limits.MaxSteps}}
	m.render()
}

// Run is the id of the run shown, "" when the pane shows a session.
func (m Model) Run() string {
	if m.run == nil {
		return ""
	}
	return m.run.rec.ID
}

// SetRun updates the run's record and its totals with its workers (the
// title).
func (m *Model) SetRun(rec *runs.Record, tokens int64, cost *float64) {
	if m.run == nil || rec == nil || rec.ID != m.run.rec.ID {
		return
	}
	m.run.rec, m.run.tokens, m.run.cost = rec, tokens, cost
	m.render()
}

// ApplyRun adds the events an update of the shown run carries.
func (m *Model) ApplyRun(u runs.Update) {
	r := m.run
	if r == nil || u.ID != r.rec.ID {
		return
	}
	m.loaded = true
	if u.Reset {
		m.steps, m.dropped, m.byKey = nil, 0, map[string]int{}
		r.render = orchestrator.Renderer{MaxSteps: r.rec.Limits.MaxSteps}
	}
	if u.Skipped > 0 {
		m.add(step{lines: []render.Line{{Kind: render.Raw, Text: fmt.Sprintf("… %s of earlier events not shown (zwarm runs show %s has them all)",
			size(u.Skipped), record.ShortID(r.rec.ID))}}})
	}
	for _, ev := range u.Events {
		r.thinking = 0
		if ev.Type == runs.EventModelCall {
			r.thinking = ev.Step
		}
		var lines []render.Line
		for _, l := range r.render.Lines(ev) {
			lines = append(lines, render.Line{Kind: lineKind(l.Kind), Indent: l.Indent, Text: l.Text})
		}
		if ev.Type == runs.EventStopped && ev.Summary != "" {
			// The summary's lines as the model wrote them (orchestrate
			// prints them so), not one line with its breaks escaped.
			prefix := "» "
			for _, text := range render.Lines(ev.Summary) {
				lines = append(lines, render.Line{Kind: render.Message, Indent: 1, Text: prefix + text})
				prefix = "  "
			}
		}
		if len(lines) > 0 {
			m.add(step{lines: lines})
		}
	}
	m.render()
}

// lineKind styles a run's line as the trajectory's alike lines are.
func lineKind(k orchestrator.LineKind) render.Kind {
	switch k {
	case orchestrator.LineHeader, orchestrator.LineStep, orchestrator.LineDone:
		return render.Turn
	case orchestrator.LineReasoning:
		return render.Reasoning
	case orchestrator.LineCall:
		return render.Tool
	case orchestrator.LineResult:
		return render.Output
	case orchestrator.LineError:
		return render.Error
	case orchestrator.LineNote:
		return render.Raw
	}
	return render.Message
}

// runTail is what the pane adds under a run's steps: that the model is
// thinking, while it is.
func (m Model) runTail() []render.Line {
	r := m.run
	if r != nil && r.rec.Status == runs.StatusWaiting && r.rec.Question != nil {
		// What it asks, and how to answer, stay in view at the bottom.
		q := r.rec.Question
		lines := []render.Line{{Kind: render.User, Text: "? asks: " + render.SafeLine(q.Text)}}
		if len(q.Options) > 0 {
			opts := make([]string, len(q.Options))
			for i, o := range q.Options {
				opts[i] = fmt.Sprintf("%d) %s", i+1, render.SafeLine(o))
			}
			lines = append(lines, render.Line{Kind: render.User, Indent: 1, Text: "options: " + strings.Join(opts, " · ")})
		}
		return append(lines, render.Line{Kind: render.Done, Indent: 1, Text: "i answers it"})
	}
	if r == nil || r.thinking == 0 || r.rec.Status != runs.StatusRunning {
		return nil
	}
	return []render.Line{{Kind: render.Done, Text: fmt.Sprintf("… step %d/%d · the model is thinking", r.thinking, r.render.MaxSteps)}}
}

// runTitle is the title line of a run: its status and step, cost with its
// workers, model and task.
func (m Model) runTitle() string {
	r := m.run
	rec := r.rec
	return fmt.Sprintf("run:%s %s %s · step %d/%d · %s · %s · %s", record.ShortID(rec.ID), styles.RunIcon(string(rec.Status)), rec.Status,
		rec.Steps, rec.Limits.MaxSteps, render.Cost(r.cost), render.SafeLine(rec.Model), render.SafeLine(rec.Task))
}

package main

import (
	"fmt"
	"time"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/watchers/notify"
)

// runNotice is what zwarm watch prints when a run asks a question or
// stops. In JSON it has exactly these fields; "event" (absent from the
// workers' alerts, which have "watcher") tells it apart.
type runNotice struct {
	Event  string      `json:"event"` // run.asks or run.finished
	RunID  string      `json:"run_id"`
	Text   string      `json:"text"` // the question, or how it ended
	Status runs.Status `json:"status"`
	Task   string      `json:"task"`
	At     time.Time   `json:"at"`
	// Options are the answers a question offers (zwarm runs answer
	// RUN N picks the Nth).
	Options []string `json:"options,omitempty"`
}

func runNoticeOf(ev notify.Event, rec *runs.Record) runNotice {
	rn := runNotice{Event: ev.Name, RunID: rec.ID, Status: rec.Status, Task: rec.Task, At: time.Now().UTC()}
	switch {
	case ev.Name == notify.RunAsks && rec.Question != nil:
		rn.Text, rn.Options = rec.Question.Text, rec.Question.Options
	case rec.Summary != "":
		rn.Text = string(rec.Status) + ": " + rec.Summary
	case rec.StopReason != "":
		rn.Text = string(rec.Status) + ": " + rec.StopReason
	default:
		rn.Text = string(rec.Status)
	}
	return rn
}

// line is the notice for people: time, what, run, the question (with
// its options and how to answer) or the end, task.
func (rn runNotice) line(io *cli.Streams) string {
	name, colour := fmt.Sprintf("%-10s", "run ended"), cli.Green
	text := render.SafeLine(rn.Text)
	if rn.Event == notify.RunAsks {
		name, colour = fmt.Sprintf("%-10s", "run asks"), cli.Yellow
		for i, o := range rn.Options {
			text += fmt.Sprintf(" [%d] %s", i+1, render.SafeLine(o))
		}
		text += " (zwarm runs answer " + record.ShortID(rn.RunID) + " ...)"
	} else if rn.Status != runs.StatusCompleted {
		colour = cli.Red
	}
	return fmt.Sprintf("%s  %s  %s  %s  · %s", rn.At.Local().Format("15:04:05"), io.Paint(colour, name),
		record.ShortID(rn.RunID), text, render.Clip(rn.Task, 60))
}

package pilot

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
)

// commands are what the prompt takes besides turns.
var commands = []struct{ name, args, help string }{
	{":status", "", "the run: its status, steps, tokens and cost, workers"},
	{":workers", "", "the run's workers"},
	{":history", "", "the checkpoints: one per turn of yours, with the model's answer"},
	{":goto", " N", "take the conversation back to checkpoint N: the model forgets the later turns; workers, their changes and the run's records stay"},
	{":quit", "", "leave (so does Ctrl+D); zwarm pilot --resume ID continues"},
	{":help", "", "this list"},
}

// command runs a line that starts with ':'; quit says to leave.
func (pl *Conversation) command(line string) (quit bool, err error) {
	f := strings.Fields(line)
	name, args := f[0], f[1:]
	switch name {
	case ":quit", ":q", ":exit":
		return true, nil
	case ":help":
		var b strings.Builder
		for _, c := range commands {
			fmt.Fprintf(&b, "  %-10s %s\n", c.name+c.args, c.help)
		}
		fmt.Fprint(pl.io.Out, b.String())
		return false, nil
	}
	if pl.run == nil {
		return false, errors.New("no run yet: write what to do, and the first turn starts one")
	}
	switch name {
	case ":status":
		return false, pl.status()
	case ":workers":
		return false, pl.workers()
	case ":history":
		pl.history(pl.run.Checkpoints())
		return false, nil
	case ":goto":
		n, err := strconv.Atoi(strings.Join(args, ""))
		if len(args) != 1 || err != nil {
			return false, errors.New(":goto takes a checkpoint's number (:history lists them)")
		}
		if _, err := pl.run.Rewind(n); err != nil {
			return false, fmt.Errorf(":goto %d: %w", n, err)
		}
		fmt.Fprintf(pl.io.ErrOut, "your next message is turn %d\n", n+1)
		return false, nil
	}
	return false, fmt.Errorf("unknown command %s; :help lists them", name)
}

// status prints the run as it is now: its record, with its workers read
// again.
func (pl *Conversation) status() error {
	rec := pl.run.Refresh(pl.base)
	list, err := pl.runWorkers()
	if err != nil {
		return err
	}
	running, done, failed := 0, 0, 0
	for _, s := range list {
		switch {
		case !s.Settled():
			running++
		case s.Status() == record.StatusCompleted:
			done++
		default:
			failed++
		}
	}
	lines := []orchestrator.Line{
		{Kind: orchestrator.LineHeader, Text: fmt.Sprintf("run %s · %s · %s · pilot", record.ShortID(rec.ID), rec.Status, render.SafeLine(rec.Model))},
		{Kind: orchestrator.LineMessage, Text: "dir: " + render.SafeLine(rec.Dir)},
		{Kind: orchestrator.LineMessage, Text: fmt.Sprintf("turn %d · steps %d/%d · %s · %s tokens (model %s, workers %s)", len(pl.run.Checkpoints()),
			rec.Steps, rec.Limits.MaxSteps, render.PartialCost(rec.TotalCost()), render.Tokens(rec.TotalTokens()), render.Tokens(rec.Usage.TotalTokens), render.Tokens(rec.WorkerUsage.TotalTokens))},
		{Kind: orchestrator.LineMessage, Text: fmt.Sprintf("workers: %d running, %d done, %d failed or killed", running, done, failed)},
	}
	if n := runs.QueuedCount(runs.RunDir(pl.m.Store().Dir(), rec.ID)); n > 0 {
		lines = append(lines, orchestrator.Line{Kind: orchestrator.LineMessage, Text: render.Plural(n, "message") + " from zwarm runs say waiting: given to the model in your next turn"})
	}
	pl.opt.View.Lines(lines)
	return nil
}

func (pl *Conversation) runWorkers() ([]*record.Session, error) {
	list, err := pl.m.List(pl.base, listing.Options{Source: record.RunSource(pl.run.ID())})
	var le *listing.Error
	if err != nil && !errors.As(err, &le) {
		return nil, err
	}
	return list, nil
}

func (pl *Conversation) workers() error {
	list, err := pl.runWorkers()
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(pl.io.Out, "no workers")
		return nil
	}
	return pl.opt.View.Sessions(list)
}

// history prints checkpoints: the turn, what the person wrote, and the
// model's answer.
func (pl *Conversation) history(cps []orchestrator.Checkpoint) {
	if len(cps) == 0 {
		fmt.Fprintln(pl.io.Out, "no checkpoints yet")
		return
	}
	var lines []orchestrator.Line
	for _, cp := range cps {
		lines = append(lines, orchestrator.Line{Kind: orchestrator.LineHeader, Text: fmt.Sprintf("%d  you: %s", cp.Turn, render.SafeLine(render.Clip(cp.Text, 200)))})
		answer := "(no answer)"
		if cp.Answer != "" {
			answer = "» " + render.SafeLine(render.Clip(cp.Answer, 200))
		}
		lines = append(lines, orchestrator.Line{Kind: orchestrator.LineMessage, Indent: 2, Text: answer})
	}
	pl.opt.View.Lines(lines)
}

// recap reminds the person, on resume, where the conversation stands.
func (pl *Conversation) recap() {
	cps := pl.run.Checkpoints()
	if len(cps) == 0 {
		return
	}
	pl.history(cps[len(cps)-1:])
	if len(cps) > 1 {
		fmt.Fprintf(pl.io.ErrOut, "%s before it: :history lists them\n", render.Plural(len(cps)-1, "turn"))
	}
}

// pilotCommandNames are the names the prompt completes.
func commandNames() []string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return names
}

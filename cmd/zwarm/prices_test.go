package main

import (
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// A model without a price costs "?", not "–" (which waits for a turn's
// usage): in ls and show, on a terminal with one line saying how to price
// it, and piped as "?" in the place of the number. A priced model costs
// plain dollars when piped.
func TestUnpricedModelReadsQuestionMark(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	priced := w.spawn("priced")
	unpriced := w.spawn("unpriced", "--model", "mystery-model")
	w.ok("wait", priced, unpriced)

	costOf := func(ls, id string) string {
		for _, l := range strings.Split(ls, "\n") {
			if f := strings.Split(l, "\t"); len(f) == 11 && f[0] == id {
				return f[7]
			}
		}
		t.Fatalf("no row for %s in:\n%s", id, ls)
		return ""
	}
	piped := w.ok("ls")
	if got := costOf(piped, unpriced); got != "?" {
		t.Errorf("piped ls: the unpriced session costs %q, want ?", got)
	}
	if got := costOf(piped, priced); got != "0.000195" {
		t.Errorf("piped ls: the priced session costs %q, want 0.000195 (700 in and 10 out at gpt-5.1-codex-mini's price)", got)
	}
	if strings.Contains(piped, "no price known") {
		t.Errorf("piped ls has a footnote:\n%s", piped)
	}

	screen, code := w.onTerminal(200, nil, "", "ls")
	screen = visible(screen)
	if code != 0 {
		t.Fatalf("ls on a terminal: exit %d\n%s", code, screen)
	}
	var row string
	for _, l := range strings.Split(screen, "\n") {
		if strings.HasPrefix(l, unpriced[:8]) {
			row = l
		}
	}
	if !strings.Contains(row, " ? ") || strings.Contains(row, "–") {
		t.Errorf("ls on a terminal: the unpriced row reads %q, want a ? cost", row)
	}
	note := `? no price known for model mystery-model: add [prices."mystery-model"]`
	if strings.Count(screen, note) != 1 || !strings.Contains(screen, "+?") {
		t.Errorf("ls on a terminal: want the total as a part (+?) and one footnote %q:\n%s", note, screen)
	}

	show := w.ok("show", unpriced)
	if !strings.Contains(show, "tokens (700 in, 0 cached, 10 out) · ?\n") || !strings.Contains(show, note) {
		t.Errorf("show:\n%s", show)
	}
	if strings.Contains(w.ok("show", priced), "no price known") {
		t.Error("show of a priced session has the footnote")
	}
}

// Piped, runs prints a run's cost as a plain number, or "?" when a price is
// missing, never "$... (some prices unknown)"; on a terminal the part that
// is known is shown with "+?" and one footnote names the model.
func TestRunsCostPlainWhenPiped(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "RUNS COST: unpriced model"
	srv.On(task, replyCalls(fcall("finish", map[string]any{"summary": "done"})))
	w.ok("orchestrate", "--model", "mystery-orchestrator", "--max-steps", "3", task)
	piped := w.ok("runs")
	var cost string
	for _, l := range strings.Split(piped, "\n") {
		if f := strings.Split(l, "\t"); len(f) == 8 && f[0] != "ID" {
			cost = f[5]
		}
	}
	if cost != "?" {
		t.Errorf("piped runs: cost %q, want ?\n%s", cost, piped)
	}
	screen, code := w.onTerminal(200, nil, "", "runs")
	screen = visible(screen)
	if code != 0 || strings.Count(screen, `? no price known for model mystery-orchestrator: add [prices."mystery-orchestrator"]`) != 1 {
		t.Errorf("runs on a terminal: exit %d\n%s", code, screen)
	}
}

// A running session that has reported no usage yet (codex reports a
// turn's at its end) has tokens and cost unknown, "–" piped as on a
// terminal: not 0, which would be a lie, and alike for every agent.
func TestPipedLsSaysUnknownWhileNothingIsReported(t *testing.T) {
	t.Parallel()
	w, id := blockedWorld(t)
	sessionstest.Eventually(t, "the turn to run", func() bool { return w.show(id).Status() == record.StatusRunning })
	for _, l := range strings.Split(w.ok("ls"), "\n") {
		if f := strings.Split(l, "\t"); len(f) == 11 && f[0] == id {
			if f[1] != "running" || f[6] != "–" || f[7] != "–" {
				t.Fatalf("piped ls of a running session with no usage: status %s, tokens %q, cost %q", f[1], f[6], f[7])
			}
			return
		}
	}
	t.Fatalf("no row for %s", id)
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/render"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printOutcome says how a session's last turn ended, for --wait.
func printOutcome(w io.Writer, s *sessions.Session) {
	fmt.Fprintf(w, "%s %s (turn %d, %s tokens, %s)\n", s.ID, s.Status, s.Turn, tokens(s.Usage.TotalTokens), cost(s.CostUSD))
	if s.Error != "" {
		fmt.Fprintf(w, "error: %s\n", s.Error)
	}
	if s.LastMessage != "" {
		fmt.Fprintln(w, s.LastMessage)
	}
}

func tokens(n int64) string { return render.Tokens(n) }

func cost(c *float64) string { return render.Cost(c) }

func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// clip shortens s to n runes on one line.
func clip(s string, n int) string { return render.Clip(s, n) }

// printLines writes rendered step lines, indented.
func printLines(w io.Writer, lines ...render.Line) {
	for _, l := range lines {
		fmt.Fprintln(w, strings.Repeat("  ", l.Indent)+l.Text)
	}
}

// writeStep prints one event of a trajectory in a human form.
func writeStep(w io.Writer, ev sessions.Event) { printLines(w, render.Of(ev)...) }

func writeTurnHeader(w io.Writer, t sessions.Turn) { printLines(w, render.TurnHeader(t)) }

// timeNow is the clock of the human-readable output.
var timeNow = time.Now

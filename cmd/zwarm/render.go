package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zwarm/zwarm/sessions"
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

func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}

func cost(c *float64) string {
	if c == nil {
		return "?"
	}
	if *c < 0.01 && *c > 0 {
		return fmt.Sprintf("$%.4f", *c)
	}
	return fmt.Sprintf("$%.2f", *c)
}

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
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// indent prefixes every line of s.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// excerpt keeps the first and last lines of a long output.
func excerpt(s string, head, tail int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= head+tail {
		return strings.Join(lines, "\n")
	}
	out := append([]string{}, lines[:head]...)
	out = append(out, fmt.Sprintf("… %d more lines …", len(lines)-head-tail))
	return strings.Join(append(out, lines[len(lines)-tail:]...), "\n")
}

// writeStep prints one event of a trajectory in a human form.
func writeStep(w io.Writer, ev sessions.Event) {
	switch ev.Type {
	case sessions.EventReasoning:
		fmt.Fprintf(w, "  · thinking: %s\n", clip(ev.Text, 200))
	case sessions.EventCommand:
		switch {
		case ev.Phase == sessions.PhaseStarted:
			fmt.Fprintf(w, "  $ %s  (running)\n", ev.Command)
		case ev.ExitCode != nil:
			fmt.Fprintf(w, "  $ %s  (exit %d)\n", ev.Command, *ev.ExitCode)
		default:
			fmt.Fprintf(w, "  $ %s  (%s)\n", ev.Command, firstOr(ev.Status, "no exit code"))
		}
		if ev.Phase != sessions.PhaseStarted && strings.TrimSpace(ev.Output) != "" {
			fmt.Fprintln(w, indent(excerpt(ev.Output, 4, 2), "    │ "))
		}
	case sessions.EventFileChange:
		for _, c := range ev.Changes {
			fmt.Fprintf(w, "  ✎ %s %s\n", c.Kind, c.Path)
		}
	case sessions.EventTodoList:
		for _, t := range ev.Todos {
			box := "☐"
			if t.Completed {
				box = "☑"
			}
			fmt.Fprintf(w, "  %s %s\n", box, t.Text)
		}
	case sessions.EventToolCall:
		fmt.Fprintf(w, "  → %s %s\n", ev.Tool, clip(ev.Input, 120))
		if ev.Text != "" {
			fmt.Fprintf(w, "    ! %s\n", ev.Text)
		}
	case sessions.EventToolResult:
		fmt.Fprintf(w, "    ← %s\n", clip(ev.Output, 200))
	case sessions.EventMessage:
		fmt.Fprintln(w, indent(ev.Text, "  » "))
	case sessions.EventError:
		fmt.Fprintf(w, "  ! %s\n", ev.Text)
	case sessions.EventRetry:
		fmt.Fprintf(w, "  ↻ %s\n", ev.Text)
	case sessions.EventTurnFailed:
		fmt.Fprintf(w, "  ✗ turn failed: %s\n", ev.Text)
	case sessions.EventTurnCompleted:
		if ev.Usage != nil {
			fmt.Fprintf(w, "  ✓ turn completed (%s in, %s out)\n", tokens(ev.Usage.InputTokens), tokens(ev.Usage.OutputTokens))
		} else {
			fmt.Fprintln(w, "  ✓ turn completed")
		}
	case sessions.EventRaw:
		fmt.Fprintf(w, "  | %s\n", clip(ev.Text, 200))
	}
}

func firstOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func writeTurnHeader(w io.Writer, t sessions.Turn) {
	fmt.Fprintf(w, "── turn %d ── %s\n", t.N, clip(t.Prompt, 100))
}

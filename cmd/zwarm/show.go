package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/render"
)

type showOptions struct {
	f    *factory
	id   string
	json bool
}

func newShowCmd(f *factory) *cobra.Command {
	o := &showOptions{f: f}
	c := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session: its messages and step-by-step trajectory",
		Args:  exactArgs(1, "one session id (a unique prefix is enough)"),
		RunE: func(c *cobra.Command, args []string) error {
			o.id = args[0]
			return runShow(c, o)
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print the session with its turns and messages as JSON")
	return c
}

// showJSON is a session with its conversation, trajectory and follow-ups.
type showJSON struct {
	*sessions.Session
	Messages []sessions.Message    `json:"messages"`
	Steps    []stepJSON            `json:"steps"`
	Inbox    []sessions.InboxEntry `json:"inbox"`
}

// stepJSON is one step of the trajectory with the turn it belongs to.
type stepJSON struct {
	Turn int `json:"turn"`
	sessions.Event
}

func trajectory(turns []sessions.TurnLog) []stepJSON {
	out := []stepJSON{}
	for _, tl := range turns {
		for _, ev := range sessions.Steps(tl.Events) {
			out = append(out, stepJSON{Turn: tl.Turn.N, Event: ev})
		}
	}
	return out
}

func runShow(c *cobra.Command, o *showOptions) error {
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	s, turns, err := m.Transcript(c.Context(), o.id)
	if err != nil {
		return err
	}
	inbox, err := m.Inbox(s.ID)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.f.io.out, showJSON{Session: s, Messages: sessions.Messages(s, turns), Steps: trajectory(turns), Inbox: inbox})
	}
	writeShow(o.f.io.out, s, turns, inbox, time.Now())
	return nil
}

func writeShow(w io.Writer, s *sessions.Session, turns []sessions.TurnLog, inbox []sessions.InboxEntry, now time.Time) {
	fmt.Fprintf(w, "session  %s\n", s.ID)
	fmt.Fprintf(w, "status   %s", s.Status)
	if s.ExitCode != nil {
		fmt.Fprintf(w, " (exit %d)", *s.ExitCode)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "agent    %s %s", s.Adapter, s.Model)
	if s.ThreadID != "" {
		fmt.Fprintf(w, "  thread %s", s.ThreadID)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "dir      %s\n", s.WorkingDir)
	fmt.Fprintf(w, "started  %s by %s, ran %s\n", s.CreatedAt.Local().Format("2006-01-02 15:04:05"), s.Source, s.Runtime(now).Round(time.Second))
	fmt.Fprintf(w, "usage    %d turns, %s tokens (%s in, %s cached, %s out), %s\n", s.Turn, tokens(s.Usage.TotalTokens),
		tokens(s.Usage.InputTokens), tokens(s.Usage.CachedInputTokens), tokens(s.Usage.OutputTokens), cost(s.CostUSD))
	if s.Error != "" {
		fmt.Fprintf(w, "error    %s\n", s.Error)
	}
	if s.Legacy {
		fmt.Fprintln(w, "note     written by the Python zwarm: read-only")
		for _, msg := range sessions.Messages(s, nil) {
			fmt.Fprintf(w, "\n[%s]\n%s\n", msg.Role, msg.Text)
		}
	}
	for _, tl := range turns {
		fmt.Fprintln(w)
		writeTurnHeader(w, tl.Turn)
		printLines(w, render.Prompt(tl.Turn)...)
		for _, ev := range sessions.Steps(tl.Events) {
			writeStep(w, ev)
		}
		if tl.Turn.EndedAt != nil {
			printLines(w, render.TurnEnd(tl.Turn, cost(tl.Turn.CostUSD)))
		}
	}
	if len(inbox) > 0 {
		fmt.Fprintln(w, "\nfollow-ups:")
		for _, e := range inbox {
			state := string(e.State)
			switch {
			case e.State == sessions.InboxDelivered:
				state = fmt.Sprintf("delivered as turn %d", e.Turn)
			case e.Reason != "":
				state += ": " + e.Reason
			}
			fmt.Fprintf(w, "  %s  %s  (%s)\n", e.CreatedAt.Local().Format("15:04:05"), clip(e.Text, 60), state)
		}
	}
}

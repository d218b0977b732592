package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/sessions"
)

type injectOptions struct {
	f       *factory
	id      string
	message string
	wait    bool
	json    bool
}

func newInjectCmd(f *factory) *cobra.Command {
	o := &injectOptions{f: f}
	c := &cobra.Command{
		Use:     "inject ID [--] MESSAGE",
		Aliases: []string{"continue"},
		Short:   "Send a follow-up: the next turn of the same agent thread",
		Long: `Send a follow-up to a session. A finished session continues at once with the
agent's native resume (same thread, full context). A running session queues
the message; it is delivered, in order, when the running turn ends.`,
		Args: minArgs(2, "a session id and a message"),
		RunE: func(c *cobra.Command, args []string) error {
			o.id, o.message = args[0], strings.Join(args[1:], " ")
			return runInject(c, o)
		},
	}
	c.Flags().BoolVar(&o.wait, "wait", false, "block until the turn this message becomes has ended")
	c.Flags().BoolVar(&o.json, "json", false, "print the session as JSON (with --wait, once the turn ended)")
	return c
}

func runInject(c *cobra.Command, o *injectOptions) error {
	if strings.TrimSpace(o.message) == "" {
		return usagef("empty message: say what the agent should do next")
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	ctx := c.Context()
	res, err := m.Inject(ctx, o.id, o.message)
	if err != nil {
		return err
	}
	if !o.wait {
		if o.json {
			return writeJSON(o.f.io.out, res.Session)
		}
		fmt.Fprintf(o.f.io.out, "%s %s\n", res.Session.ID, injectOutcome(res))
		return nil
	}
	e, s, err := m.WaitInbox(ctx, res.Session.ID, res.Entry.ID)
	if err != nil {
		return err
	}
	if o.json {
		if err := writeJSON(o.f.io.out, s); err != nil {
			return err
		}
	}
	if e.State == sessions.InboxUndelivered {
		if !o.json {
			fmt.Fprintf(o.f.io.out, "%s: follow-up not delivered: %s\n", s.ID, e.Reason)
		}
		return &silentError{code: exitFailure}
	}
	t := s.Turns[e.Turn-1]
	if !o.json {
		fmt.Fprintf(o.f.io.out, "%s turn %d %s\n", s.ID, t.N, t.Status)
		if t.Error != "" {
			fmt.Fprintf(o.f.io.out, "error: %s\n", t.Error)
		}
		if t.LastMessage != "" {
			fmt.Fprintln(o.f.io.out, t.LastMessage)
		}
	}
	if t.Status != sessions.StatusCompleted {
		return &silentError{code: exitFailure}
	}
	return nil
}

// injectOutcome says what became of a follow-up, as Inject decided it.
func injectOutcome(r *sessions.InjectResult) string {
	ahead := ""
	if r.Ahead > 0 {
		ahead = fmt.Sprintf(", after %d earlier follow-up(s)", r.Ahead)
	}
	switch r.Outcome {
	case sessions.InjectQueued:
		if r.Live {
			return fmt.Sprintf("queued: the running agent takes it as its next turn when turn %d ends%s", r.Turn, ahead)
		}
		return fmt.Sprintf("queued: it resumes the agent's thread when turn %d ends%s", r.Turn, ahead)
	case sessions.InjectRestarted:
		return fmt.Sprintf("started turn %d: the agent never reported a thread to resume, so it starts anew with the message", r.Turn)
	}
	return fmt.Sprintf("resuming: the agent continues its thread as turn %d", r.Turn)
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
)

type injectOptions struct {
	f         *factory
	id        string
	message   string
	wait      bool
	interrupt bool
	maxCost   float64
	out       cli.JSONFlags
}

func newInjectCmd(f *factory) *cobra.Command {
	o := &injectOptions{f: f}
	c := &cobra.Command{
		Use:     "inject ID [--] MESSAGE | -",
		Aliases: []string{"continue"},
		// Ctrl+C either stops it with nothing sent, or the follow-up is
		// delivered whole and it says so (exit 0).
		Annotations: map[string]string{finishesAnnotation: "true"},
		Short:       "Send a follow-up: the next turn of the same agent thread",
		Long: `Send a follow-up to a session. A settled session continues at once with the
agent's native resume (same thread, full context). A running session queues
the message; it is delivered, in order, when the running turn ends. The
command says which happened.

With --interrupt, a running turn is stopped instead (as kill stops an agent:
SIGTERM, kill_grace, SIGKILL; the session goes on) and recorded as
interrupted, and the message becomes the next turn of the same thread at
once, before any follow-up queued without --interrupt. A session attached
to a person (zwarm attach) queues it until they leave the CLI.

With --max-cost, the session's cost limit becomes that many dollars, in the
same step that sends the message: a worker stopped at its limit continues its
thread with a higher one (which must be above what it has spent).

A lone - reads the message from standard input, as spawn - reads a task:
git diff | zwarm inject ID -.`,
		Args: minArgs(2, "a session id and a message"),
		RunE: func(c *cobra.Command, args []string) error {
			o.id, o.message = args[0], strings.Join(args[1:], " ")
			if len(args) == 2 && args[1] == "-" {
				b, err := io.ReadAll(f.io.In)
				if err != nil {
					return fmt.Errorf("read the message from stdin: %w", err)
				}
				o.message = strings.TrimSpace(string(b))
			}
			return runInject(c, o)
		},
		ValidArgsFunction: completeIDs(f, nil),
	}
	c.Flags().BoolVar(&o.wait, "wait", false, "block until the turn this message becomes has ended")
	c.Flags().BoolVar(&o.interrupt, "interrupt", false, "stop the running turn and continue the thread with this message at once")
	c.Flags().Float64Var(&o.maxCost, "max-cost", 0, "raise the session's cost limit to this many US dollars (above what it has spent)")
	o.out.Add(c, "the session as JSON, with what became of the follow-up (follow_up; with --wait, once its turn ended)")
	return c
}

func runInject(c *cobra.Command, o *injectOptions) error {
	if strings.TrimSpace(o.message) == "" {
		return cli.Usagef("empty message: say what the agent should do next")
	}
	if c.Flags().Changed("max-cost") && !(o.maxCost > 0) {
		return cli.Usagef("--max-cost %v: want a number of dollars above 0", o.maxCost)
	}
	if _, err := o.out.Check(); err != nil {
		return err
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	ctx := c.Context()
	res, err := m.InjectWith(ctx, o.id, o.message, sessions.InjectOptions{Interrupt: o.interrupt, MaxCostUSD: o.maxCost})
	if errors.Is(err, sessions.ErrStopping) {
		return fmt.Errorf("inject %s: it is being killed, so the follow-up was not sent; once it has stopped, send it again to resume it", o.id)
	}
	if err != nil {
		return err
	}
	io := o.f.io
	if !o.wait {
		if o.out.On() {
			return o.out.Write(io.Out, injectJSONOf(res.Session, res, nil))
		}
		fmt.Fprintf(io.Out, "%s %s\n", record.ShortID(res.Session.ID), injectOutcome(res))
		return nil
	}
	if !o.out.On() {
		fmt.Fprintf(io.ErrOut, "%s %s\n", record.ShortID(res.Session.ID), injectOutcome(res))
	}
	e, s, err := waitInbox(ctx, io, m, res, o.out.On())
	if err != nil && ctx.Err() != nil {
		return injectInterrupted(m, res)
	}
	if err != nil {
		return err
	}
	if o.out.On() {
		if err := o.out.Write(io.Out, injectJSONOf(s, res, e)); err != nil {
			return err
		}
	}
	if e.State == record.InboxUndelivered {
		if !o.out.On() {
			fmt.Fprintf(io.Out, "%s follow-up not delivered: %s\n", record.ShortID(s.ID), render.Clip(e.Reason, 300))
		}
		return &cli.SilentError{Code: cli.ExitFailure}
	}
	if e.State != record.InboxDelivered || e.Turn < 1 || e.Turn > len(s.Turns) {
		// The session settled before it took the follow-up (its setup
		// failed again, say): it waits for the next start of the session.
		if !o.out.On() {
			fmt.Fprintf(io.Out, "%s follow-up not delivered: the session %s before it ran%s; it stays queued, for the next inject to deliver\n",
				record.ShortID(s.ID), s.Status().Ended(), errorTail(s.Error))
		}
		return &cli.SilentError{Code: cli.ExitFailure}
	}
	t := s.Turns[e.Turn-1]
	if !o.out.On() {
		var b strings.Builder
		fmt.Fprintf(&b, "%s turn %d %s\n", record.ShortID(s.ID), t.N, io.Paint(statusColor(t.Status()), string(t.Status())))
		if t.Error != "" {
			b.WriteString("  error: " + render.Clip(render.ErrorText(t.Error), 1000) + "\n")
		}
		if t.LastMessage != "" {
			for _, l := range render.Lines(t.LastMessage) {
				b.WriteString("  » " + l + "\n")
			}
		}
		io.Out.Write([]byte(b.String()))
	}
	if t.Status() != record.StatusCompleted {
		return &cli.SilentError{Code: cli.ExitFailure}
	}
	return nil
}

// injectInterrupted is the error of an inject --wait that a signal
// interrupted while it waited (printed after "interrupted", exit 130): the
// follow-up was sent, so it says what became of it and what runs on.
func injectInterrupted(m *sessions.Manager, res *sessions.InjectResult) error {
	short := record.ShortID(res.Session.ID)
	entries, err := m.Inbox(res.Session.ID)
	if err != nil {
		return fmt.Errorf("inject %s: the follow-up was sent, but what became of it cannot be read: %w", short, err)
	}
	for _, e := range entries {
		if e.ID != res.Entry.ID {
			continue
		}
		switch e.State {
		case record.InboxUndelivered:
			return fmt.Errorf("inject %s: the follow-up was not delivered: %s", short, render.Clip(e.Reason, 300))
		case record.InboxDelivered:
			if s, err := m.Get(context.Background(), res.Session.ID); err == nil && e.Turn <= len(s.Turns) && s.Turns[e.Turn-1].EndedAt != nil {
				return fmt.Errorf("inject %s: the follow-up became turn %d, which has ended: %s", short, e.Turn, s.Turns[e.Turn-1].Status())
			}
			return fmt.Errorf("inject %s: the follow-up became turn %d, which goes on in the background: zwarm wait %s waits for it, zwarm kill %s stops it",
				short, e.Turn, short, short)
		}
		return fmt.Errorf("inject %s: the follow-up stays queued: it becomes the session's next turn (zwarm kill %s drops it)", short, short)
	}
	return fmt.Errorf("inject %s: the follow-up was sent, but is not in the session's inbox", short)
}

// waitInbox waits until the follow-up has become a turn that ended (or was
// dropped), showing the session's progress on a terminal meanwhile.
func waitInbox(ctx context.Context, io *cli.Streams, m *sessions.Manager, res *sessions.InjectResult, quiet bool) (*record.InboxEntry, *record.Session, error) {
	var prog *cli.Progress
	if !quiet {
		prog = cli.StartProgress(io, "waiting for the follow-up to "+record.ShortID(res.Session.ID))
	}
	if prog != nil {
		pctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer func() {
			cancel()
			wg.Wait()
			prog.Stop()
		}()
		if sub, err := m.Subscribe(pctx, watch.SubscribeOptions{IDs: []string{res.Session.ID}, Events: true}); err == nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer sub.Close()
				for u := range sub.C() {
					prog.Update(u)
				}
			}()
		}
	}
	return m.WaitInbox(ctx, res.Session.ID, res.Entry.ID)
}

// injectOutcome says what became of a follow-up, as Inject decided it.
func injectOutcome(r *sessions.InjectResult) string {
	ahead := ""
	if r.Ahead > 0 {
		ahead = fmt.Sprintf(", after %s", render.Plural(r.Ahead, "earlier follow-up"))
	}
	switch r.Outcome {
	case sessions.InjectInterrupted:
		if r.Session != nil && r.Session.ThreadID == "" {
			return fmt.Sprintf("interrupting turn %d: it stops; its agent had not begun a thread, so the next turn begins again with the task and the follow-up%s", r.Turn, ahead)
		}
		return fmt.Sprintf("interrupting turn %d: it stops, and the follow-up continues the same thread as the next turn%s", r.Turn, ahead)
	case sessions.InjectQueued:
		if r.Attached {
			return fmt.Sprintf("queued: a person is attached to it (zwarm attach); the thread resumes with it when they leave the CLI%s", ahead)
		}
		if r.Turn == 0 {
			// Pending: its supervisor has not started yet (a job still queued).
			if r.Entry.Interrupt {
				return fmt.Sprintf("queued behind the task, which has not started yet, so there is no turn to stop: it runs first once the task's turn ends%s (inject --interrupt again once it runs to stop that turn)", ahead)
			}
			return fmt.Sprintf("queued behind the task, which has not started yet: the agent takes it when the task's turn ends%s", ahead)
		}
		if r.Entry.Interrupt && r.Session != nil && !r.Session.TurnRunning() {
			// No turn to stop: the session resumes with a follow-up sent
			// before, and this one goes ahead of those sent without
			// --interrupt.
			return fmt.Sprintf("queued to run next%s, before the follow-ups sent without --interrupt: no turn is running to stop", ahead)
		}
		if r.Ahead > 0 && r.Session != nil && !r.Session.TurnRunning() {
			// Turn r.Turn has ended: what it waits for is the follow-ups
			// sent before it (one of them resumed the session).
			return fmt.Sprintf("queued after %s: the agent's thread takes them in order", render.Plural(r.Ahead, "earlier follow-up"))
		}
		if r.Live {
			return fmt.Sprintf("queued behind turn %d: the running agent takes it as its next turn%s", r.Turn, ahead)
		}
		return fmt.Sprintf("queued behind turn %d: the agent's thread resumes with it when that turn ends%s", r.Turn, ahead)
	case sessions.InjectRestarted:
		if r.Turn == 2 && r.Session != nil && len(r.Session.Turns) == 0 {
			return "restarted: it never ran a turn, so its task runs first, as turn 1, and the message as turn 2"
		}
		return fmt.Sprintf("restarted as turn %d: the agent never reported a thread to resume, so a new run starts with the task and the message", r.Turn)
	}
	return fmt.Sprintf("resumed as turn %d: the agent continues its thread", r.Turn)
}

// errorTail is ": err", clipped and made safe, or "" for none.
func errorTail(err string) string {
	if err == "" {
		return ""
	}
	return ": " + render.Clip(render.ErrorText(err), 300)
}

// injectJSON is the session a follow-up went to, with what became of the
// follow-up: what inject did with it, and, with --wait, how it ended.
type injectJSON struct {
	cli.SessionJSON
	FollowUp followUpJSON `json:"follow_up"`
}

type followUpJSON struct {
	ID string `json:"id"`
	// Outcome is what inject did: queued, resumed, restarted or
	// interrupted (sessions.InjectOutcome).
	Outcome string `json:"outcome"`
	// Turn is the turn it waits behind (queued), stops (interrupted) or
	// becomes (resumed, restarted); with --wait, the turn it became.
	Turn  int `json:"turn"`
	Ahead int `json:"ahead"`
	// State is its inbox state: queued, delivered or undelivered (with
	// Reason).
	State  record.InboxState `json:"state"`
	Reason string            `json:"reason"`
}

func injectJSONOf(s *record.Session, res *sessions.InjectResult, answered *record.InboxEntry) injectJSON {
	f := followUpJSON{ID: res.Entry.ID, Outcome: string(res.Outcome), Turn: res.Turn, Ahead: res.Ahead, State: res.Entry.State}
	if answered != nil {
		f.State, f.Reason = answered.State, answered.Reason
		if answered.Turn > 0 {
			f.Turn = answered.Turn
		}
	}
	return injectJSON{SessionJSON: cli.ToJSON(s), FollowUp: f}
}

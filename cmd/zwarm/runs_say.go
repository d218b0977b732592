package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
)

func newRunsSayCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "say ID MESSAGE... | -",
		Short: "Give a run's model a message from you",
		Long: `say gives the orchestrating model of a run a message from you: a running run
gives it to the model as a user message before its next model call (a wait
or sleep in progress ends at once for it; a run waiting for an answer reads
it after the answer), and prints it as "you: ...". A
stopped run keeps it for zwarm orchestrate --resume ID. Messages are given
once each, in the order sent, however many are sent at once and from
where. - reads the message from stdin.

Exit status: 0 the message is queued; 2 a bad run id or an empty message.`,
		Example: `  zwarm runs say 7c1e "use the existing token bucket in pkg/limit instead"
  git diff | zwarm runs say 7c1e -`,
		Args: minArgs(2, "a run id (or unique prefix) and the message"),
		RunE: func(c *cobra.Command, args []string) error {
			dir, rec, text, err := runMessage(f, args)
			if err != nil {
				return err
			}
			e, err := runs.Send(c.Context(), dir, runs.MessageSay, text, "")
			if err != nil {
				return err
			}
			id := record.ShortID(rec.ID)
			switch {
			case rec.Status == runs.StatusRunning:
				fmt.Fprintf(f.io.Out, "run %s: message %d queued; its model reads it before its next call\n", id, e.Seq)
			case rec.Status == runs.StatusWaiting:
				fmt.Fprintf(f.io.Out, "run %s: message %d queued; its model reads it after the answer to its question\n", id, e.Seq)
				fmt.Fprintf(f.io.ErrOut, "run %s waits for an answer to: %s\n  %s \"...\" answers it\n", id,
					render.Clip(render.SafeLine(rec.Question.Text), 200), answerCommand(c, rec.ID))
			default:
				fmt.Fprintf(f.io.Out, "run %s is %s: message %d is kept for when it is resumed\n", id, rec.Status, e.Seq)
				fmt.Fprintf(f.io.ErrOut, "resume with: %s\n", resumeCommand(c, rec))
			}
			return nil
		},
	}
}

// runMessage resolves a run and reads the message of say and answer.
func runMessage(f *factory, args []string) (dir string, rec *runs.Record, text string, err error) {
	st, err := f.store()
	if err != nil {
		return "", nil, "", err
	}
	rec, err = runs.LoadRecord(st.Dir(), args[0])
	if err != nil {
		return "", nil, "", err // no such run, not a run's id: exit 2; unreadable: 1
	}
	text = strings.TrimSpace(strings.Join(args[1:], " "))
	if text == "-" {
		b, err := io.ReadAll(io.LimitReader(f.io.In, runs.MaxMessageBytes+1))
		if err != nil {
			return "", nil, "", fmt.Errorf("read the message from stdin: %w", err)
		}
		text = strings.TrimSpace(string(b))
	}
	switch {
	case text == "":
		return "", nil, "", cli.Usagef("the message is empty: say what the model should know")
	case len(text) > runs.MaxMessageBytes:
		return "", nil, "", cli.Usagef("the message is more than %d bytes: shorten it, or point the model at a file", runs.MaxMessageBytes)
	}
	return runs.RunDir(st.Dir(), rec.ID), rec, text, nil
}

// answerWait bounds how long runs answer waits for the run to take the
// answer; it is queued either way.
const answerWait = 30 * time.Second

func newRunsAnswerCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "answer ID ANSWER... | -",
		Short: "Answer the question a run waits on",
		Long: `answer answers the question the model of a run asked you (ask_user) while the
run waits for it: zwarm runs and zwarm runs show print it as "asks: ...". The
first answer counts, from here or typed on the run's own terminal; a number
(or an option's own text) picks one of the question's options, and answer
says which; a number that is none of them is refused. answer waits until the run has taken
it (at most 30s) and says so. - reads the answer from stdin.

Exit status: 0 the run took the answer (or will, once it reads its inbox);
1 the question was answered another way first, or the run stopped before it
read the answer (it is kept, and given to the model on --resume); 2 a bad
run id, an empty answer, a number that is no option's, or a run that is not
waiting for one.`,
		Example: `  zwarm runs answer 7c1e "postgres: it is what we run in production"
  zwarm runs answer 7c1e 2`,
		Args: minArgs(2, "a run id (or unique prefix) and the answer"),
		RunE: func(c *cobra.Command, args []string) error { return runRunsAnswer(c, f, args) },
	}
}

func runRunsAnswer(c *cobra.Command, f *factory, args []string) error {
	dir, rec, text, err := runMessage(f, args)
	if err != nil {
		return err
	}
	id := record.ShortID(rec.ID)
	if rec.Status != runs.StatusWaiting || rec.Question == nil {
		return cli.Usagef("run %s is %s and asks nothing: zwarm runs say %s MESSAGE gives its model a message", id, rec.Status, id)
	}
	q := *rec.Question
	text, option, err := q.Pick(text)
	if err != nil {
		return cli.Usagef("run %s: %v", id, err)
	}
	// Subscribed before sending: the run's answer event is seen however
	// fast it comes.
	ctx, cancel := context.WithTimeout(c.Context(), answerWait)
	defer cancel()
	stateDir := filepath.Dir(filepath.Dir(dir)) // <state>/runs/<id>
	sub, err := runs.Subscribe(ctx, stateDir, runs.SubscribeOptions{Run: rec.ID, Window: 256 << 10})
	if err != nil {
		return err
	}
	defer sub.Close()
	e, err := runs.Send(c.Context(), dir, runs.MessageAnswer, text, q.ID)
	if err != nil {
		return err
	}
	out, errOut := f.io.Out, f.io.ErrOut
	for u := range sub.C() {
		for _, ev := range u.Events {
			if ev.Type != runs.EventAnswer || ev.QuestionID != q.ID {
				continue
			}
			if ev.Inbox == e.Seq {
				fmt.Fprintf(out, "run %s took the answer to: %s\n", id, render.Clip(render.SafeLine(q.Text), 200))
				if option > 0 {
					fmt.Fprintf(out, "  option %d: %s\n", option, render.Clip(render.SafeLine(text), 200))
				}
				return nil
			}
			how := "on its terminal"
			if ev.Via == runs.AnswerTimeout {
				how = "by its ask_timeout (the model decides)"
			} else if ev.Via == runs.AnswerInbox {
				how = "by another runs answer"
			}
			fmt.Fprintf(errOut, "run %s: the question was answered %s first; this answer was not given to the model\n", id, how)
			return &cli.SilentError{Code: cli.ExitFailure}
		}
		if u.Record != nil && !u.Record.Status.Live() {
			fmt.Fprintf(errOut, "run %s stopped (%s) before it read the answer: it is kept, and given to the model on resume\nresume with: %s\n",
				id, u.Record.Status, resumeCommand(c, u.Record))
			return &cli.SilentError{Code: cli.ExitFailure}
		}
	}
	if errors.Is(c.Context().Err(), context.Canceled) {
		return c.Context().Err()
	}
	fmt.Fprintf(out, "run %s: answer queued (message %d); the run has not read it yet and will when it reads its inbox\n", id, e.Seq)
	return nil
}

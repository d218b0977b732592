package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/workspace"
)

type attachOptions struct {
	f         *factory
	id        string
	interrupt bool
}

func newAttachCmd(f *factory) *cobra.Command {
	o := &attachOptions{f: f}
	c := &cobra.Command{
		Use:   "attach ID",
		Short: "Work in a worker's own CLI, in its thread and dir, then hand it back",
		Long: `Open the worker's own agent CLI interactively, on this terminal, in the
session's thread (codex resume THREAD, claude --resume SESSION) with the model
and sandbox its turns had, in its dir (its worktree, if it has one).

While you are in it the session is "attached": follow-ups queue and run once
you leave, kill refuses it. When you leave the CLI, what you left in the
worktree is committed, the session settles again as it was, and the record
keeps the attached span (show prints it); later follow-ups continue the same
thread, with what you did in it. A new conversation you start in the CLI and
leave it in (claude's /clear, codex's /new) becomes the session's thread, in
a worktree, where no one else runs the agent meanwhile.

The CLI is the agent's own: what it asks the first time it opens a dir
(codex: whether to trust it) it keeps in its own settings, as when you run
it yourself.

A session still running is refused; --interrupt stops its turn first (as
inject --interrupt does: the turn is recorded interrupted) and attaches as
soon as it has stopped; a turn that has not started yet (a job in its
cluster's queue, a worktree being made) is stopped once it runs.`,
		// Ctrl+C belongs to the CLI while it runs: once attached, the
		// attach is always ended properly, and a nil error says it was.
		Annotations: map[string]string{finishesAnnotation: "true"},
		Args:        exactArgs(1, "a session id"),
		RunE: func(c *cobra.Command, args []string) error {
			o.id = args[0]
			return runAttach(c, o)
		},
		ValidArgsFunction: completeIDs(f, nil),
	}
	c.Flags().BoolVar(&o.interrupt, "interrupt", false, "stop the running turn first, then attach")
	return c
}

func runAttach(c *cobra.Command, o *attachOptions) error {
	io := o.f.io
	in, inOK := io.In.(*os.File)
	out, outOK := io.Out.(*os.File)
	errOut, _ := io.ErrOut.(*os.File)
	if !inOK || !outOK || !cli.IsTerminal(in) || !cli.IsTerminal(out) {
		return cli.Usagef("attach needs a terminal: the agent's CLI is interactive (run zwarm attach in one)")
	}
	if errOut == nil {
		errOut = out
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	// A signal to zwarm alone (SIGTERM, or the terminal hanging up) stops
	// the CLI and ends the attach properly; Ctrl+C, which the terminal
	// sends to the CLI too, is the CLI's.
	stopCtx, stop := context.WithCancel(context.WithoutCancel(c.Context()))
	defer stop()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	var signaled atomic.Bool
	go func() {
		select {
		case <-sigs:
			signaled.Store(true)
			stop()
		case <-stopCtx.Done():
		}
	}()

	interrupting := 0
	a, err := m.Attach(c.Context(), o.id, sessions.AttachOptions{Interrupt: o.interrupt, Waiting: func(n int) {
		interrupting = n
		fmt.Fprintf(io.ErrOut, "zwarm: interrupting turn %d of %s; attaching once it has stopped\n", n, o.id)
	}, Starting: func() {
		fmt.Fprintf(io.ErrOut, "zwarm: %s has not started its turn yet; interrupting it once it runs (Ctrl+C gives up)\n", o.id)
	}})
	switch {
	case err != nil && c.Context().Err() != nil && interrupting > 0:
		// The turn was stopped for the person, who then left: nothing
		// took over its thread.
		// Said whole: an error that is only the interruption prints as
		// "interrupted" alone, and this one says what became of it.
		return fmt.Errorf("attach %s: given up while turn %d stopped, so the session is left killed; zwarm inject %s MESSAGE continues its thread",
			o.id, interrupting, o.id)
	case err != nil && c.Context().Err() != nil:
		return fmt.Errorf("attach %s: %w", o.id, context.Canceled)
	case err != nil:
		return err
	}
	s := a.Session
	short := record.ShortID(s.ID)
	fmt.Fprintf(io.ErrOut, "zwarm: attached to %s (%s, thread %s) in %s; leave the CLI to hand it back\n",
		short, s.Adapter, s.ThreadID, s.WorkingDir)
	restore := cli.KeepTerminal(in)
	s, err = a.Run(stopCtx, in, out, errOut)
	restore()
	if err != nil {
		return err
	}
	// A CLI that ended on a signal (zwarm's, or Ctrl+C typed in it) did
	// not fail to start, whatever its exit.
	interrupted := signaled.Load() || c.Context().Err() != nil
	fmt.Fprintln(io.ErrOut, "zwarm: "+detachedLine(s, interrupted))
	switch n := len(s.Attaches); {
	case signaled.Load():
		return &cli.SilentError{Code: cli.ExitInterrupted} // ended properly, as a signal asked
	case n > 0 && !interrupted && failedToStart(s.Attaches[n-1]):
		return &cli.SilentError{Code: cli.ExitFailure}
	}
	return nil
}

// startWindow is how soon a CLI that exits non-zero is taken for one that
// failed to start (a login, an onboarding question it could not ask)
// rather than one a person worked in and left.
const startWindow = 10 * time.Second

// failedToStart says the span's CLI exited non-zero within startWindow,
// for no reason zwarm noted.
func failedToStart(sp record.AttachSpan) bool {
	return sp.End != nil && sp.ExitCode != nil && *sp.ExitCode != 0 && sp.End.Sub(sp.Start) < startWindow && sp.Note == ""
}

// detachedLine says how the attach ended: how long, what was committed,
// and what the session does now; interrupted says a signal ended it.
func detachedLine(s *record.Session, interrupted bool) string {
	short := record.ShortID(s.ID)
	var b strings.Builder
	if n := len(s.Attaches); n > 0 {
		sp := s.Attaches[n-1]
		if sp.End != nil {
			fmt.Fprintf(&b, "%s attached for %s", short, render.Runtime(sp.End.Sub(sp.Start)))
			if !interrupted && failedToStart(sp) {
				fmt.Fprintf(&b, "; the %s CLI exited %d at once: it failed to start (run it in %s yourself to see why: a login, a first-run question)",
					s.Adapter, *sp.ExitCode, s.WorkingDir)
			} else if sp.Note != "" && !interrupted {
				fmt.Fprintf(&b, "; %s", render.SafeLine(sp.Note))
			} else if sp.ExitCode != nil && *sp.ExitCode != 0 {
				fmt.Fprintf(&b, "; the %s CLI exited %d", s.Adapter, *sp.ExitCode)
			}
		}
		if sp.Thread != "" {
			fmt.Fprintf(&b, "; you started a new conversation (thread %s): follow-ups continue it", render.SafeLine(sp.Thread))
		}
		if sp.Commit != "" {
			// The files are the span's change, a commit the person made
			// in it too; the commit is what zwarm made of the rest.
			fmt.Fprintf(&b, "; its work is committed (%s; %s changed while attached)", workspace.Abbrev(sp.Commit), render.Plural(len(sp.Files), "file"))
		}
	}
	if s.Settled() {
		fmt.Fprintf(&b, "; it is %s again", s.Status())
	} else {
		fmt.Fprintf(&b, "; the follow-ups sent meanwhile run now (zwarm wait %s)", short)
	}
	return b.String()
}

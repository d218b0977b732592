package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
)

type waitOptions struct {
	f       *factory
	ids     []string
	all     bool
	any     bool
	timeout time.Duration
	out     cli.JSONFlags
}

func newWaitCmd(f *factory) *cobra.Command {
	o := &waitOptions{f: f}
	c := &cobra.Command{
		Use:   "wait ID... | --all",
		Short: "Block until sessions settle; exit 1 if one failed, 124 on --timeout",
		Long: `Block until the sessions have settled: no turn running and none queued. Exit 0
if all completed, 1 if one failed or was killed, 124 if --timeout passed first.
--all waits for every session not settled when it starts. On a terminal,
stderr shows what each session is doing meanwhile. On a timeout, stderr names
every session still running and --json prints them all as they are.`,
		RunE: func(c *cobra.Command, args []string) error {
			if o.all == (len(args) > 0) {
				return cli.Usagef("give session ids or --all, not both and not neither")
			}
			o.ids = args
			return runWait(c, o)
		},
		ValidArgsFunction: completeIDs(f, func(s *record.Session) bool { return !s.Settled() }),
	}
	c.Flags().BoolVar(&o.all, "all", false, "wait for every session not settled now")
	c.Flags().BoolVar(&o.any, "any", false, "return when the first of them settles")
	c.Flags().DurationVar(&o.timeout, "timeout", 0, "give up after this long (e.g. 10m) with exit 124; 0 waits forever")
	o.out.Add(c, "a JSON array of the sessions")
	return c
}

func runWait(c *cobra.Command, o *waitOptions) error {
	if o.timeout < 0 {
		return cli.Usagef("--timeout must not be negative")
	}
	if _, err := o.out.Check(); err != nil {
		return err
	}
	m, err := o.f.manager()
	if err != nil {
		return err
	}
	if o.all {
		if o.ids, err = targets(c.Context(), m, nil, true, func(s *record.Session) bool { return !s.Settled() }); err != nil {
			return err
		}
		if len(o.ids) == 0 {
			if o.out.On() {
				return o.out.Write(o.f.io.Out, cli.ListJSON(nil))
			}
			fmt.Fprintln(o.f.io.ErrOut, "no session is running")
			return nil
		}
	}
	short := make([]string, len(o.ids))
	for i, id := range o.ids {
		short[i] = record.ShortID(id)
	}
	what := "waiting for " + strings.Join(short, " ")
	if len(o.ids) > 3 {
		what = fmt.Sprintf("waiting for %d sessions", len(o.ids))
	}
	cfg, err := m.Config()
	if err != nil {
		return err
	}
	n, err := o.f.notifier(m, cfg, nil, nil)
	if err != nil {
		return err
	}
	list, err := waitSessions(c.Context(), o.f.io, m, o.ids, o.any, o.timeout, what, o.out.On())
	if te := (*cli.TimeoutError)(nil); errors.As(err, &te) && o.out.On() {
		// A script that gave up still learns where every session stands.
		if werr := o.out.Write(o.f.io.Out, cli.ListJSON(present(list))); werr != nil {
			return werr
		}
		return err
	}
	if err != nil {
		return err
	}
	// The [notify] command runs for the sessions wait saw settle, unless
	// another zwarm process already ran it.
	w := n.Workers(m.Store().Dir())
	for _, s := range list {
		w.Settled(s)
	}
	if o.out.On() {
		if err := o.out.Write(o.f.io.Out, cli.ListJSON(list)); err != nil {
			return err
		}
	} else {
		for _, s := range list {
			printOutcome(o.f.io, s)
		}
	}
	var done []*record.Session
	for _, s := range list {
		if s.Settled() {
			done = append(done, s)
		}
	}
	return failedExit(done...)
}

// waitSessions waits as wait does, with the progress on a terminal unless
// the output is JSON. A timeout is a *timeoutError naming what still runs.
func waitSessions(ctx context.Context, io *cli.Streams, m *sessions.Manager, ids []string, anyOf bool, timeout time.Duration, what string, quiet bool) ([]*record.Session, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var prog *cli.Progress
	if !quiet {
		prog = cli.StartProgress(io, what)
	}
	list, err := m.Wait(ctx, ids, sessions.WaitOptions{Any: anyOf, OnUpdate: prog.Update, Events: prog != nil})
	prog.Stop()
	if errors.Is(err, context.DeadlineExceeded) {
		var running []string
		for _, s := range list {
			if s != nil && !s.Settled() {
				id := record.ShortID(s.ID)
				if st := s.Status(); st != record.StatusRunning {
					id += " (" + string(st) + ")" // attached, pending, queued: not running as such
				}
				running = append(running, id)
			}
		}
		return list, &cli.TimeoutError{Err: fmt.Errorf("timed out after %s; still running: %s", timeout, strings.Join(running, " "))}
	}
	return list, err
}

// present drops the sessions that could not be read at all.
func present(list []*record.Session) []*record.Session {
	out := make([]*record.Session, 0, len(list))
	for _, s := range list {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// failedExit makes a session that ended badly the command's failure.
func failedExit(ss ...*record.Session) error {
	for _, s := range ss {
		if s.Status() == record.StatusFailed || s.Status() == record.StatusKilled {
			return &cli.SilentError{Code: cli.ExitFailure}
		}
	}
	return nil
}

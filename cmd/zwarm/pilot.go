package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/pilot"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/watchers"
	"github.com/zwarm/zwarm/watchers/notify"
)

// pilotOptions are orchestrate's, for a run that goes turn by turn.
type pilotOptions struct {
	orchestrateOptions
}

func newPilotCmd(f *factory) *cobra.Command {
	o := &pilotOptions{orchestrateOptions{f: f, pilot: true}}
	c := &cobra.Command{
		Use:   "pilot [flags] [--] [TASK]  (or --resume ID [MESSAGE])",
		Short: "Work with the orchestrator turn by turn: you write, it works until it answers",
		Long: `pilot is orchestrate as a conversation: you write, the orchestrating model works
on it with its workers and tools (delegating, waiting, verifying) until it
answers you, then you write again. Its steps are printed as orchestrate
prints them. The run is an ordinary run (zwarm runs lists it), whose
conversation has a checkpoint at the end of each of your turns.

At the prompt (line editing, and history kept in the state dir):
  :status     the run: status, steps, tokens and cost, workers
  :workers    the run's workers
  :history    the checkpoints, one per turn of yours, with the answers
  :goto N     take the conversation back to checkpoint N (the end of your
              turn N): the model forgets what came after; workers, their
              changes and the run's records stay
  :quit       leave; zwarm pilot --resume ID continues (so does Ctrl+D)

Ctrl+C while the model works stops its turn and gives you the prompt
back; at the prompt it leaves. Without a terminal, each line of stdin is a
turn (or a command). --timeout bounds each turn; the other limits the whole
conversation, and reaching one ends it as orchestrate's run would end.

Exit status: 0 when you left (:quit, end of input), 1 when the run ended at a
limit or by a watcher, 2 for a command line that cannot be run, 130 for
Ctrl+C at the prompt or SIGTERM.`,
		Example: `  zwarm pilot
  zwarm pilot "add rate limiting to the API, with tests"
  zwarm pilot --resume 7c1e
  zwarm pilot --resume 7c1e "now also add metrics"
  printf 'list the TODOs in pkg/api\n:status\n' | zwarm pilot`,
		// Ctrl+C is the person's: it stops a turn, and the command's own
		// result decides the exit (main.go).
		Annotations: map[string]string{ownsInterruptAnnotation: "true"},
		RunE:        func(c *cobra.Command, args []string) error { return runPilot(c, o, args) },
	}
	fl := c.Flags()
	fl.StringVar(&o.resume, "resume", "", "continue the pilot run with this id (or unique prefix)")
	fl.StringVarP(&o.model, "model", "m", "", "orchestrating model (config: model)")
	fl.StringVar(&o.effort, "reasoning-effort", "", "how hard the orchestrating model thinks: minimal, low, medium, high (config: reasoning_effort)")
	fl.StringVarP(&o.dir, "dir", "C", "", "the run's working dir (default: current)")
	fl.IntVar(&o.maxSteps, "max-steps", 0, "most model steps of the conversation (config: max_steps, default 50)")
	fl.Float64Var(&o.maxCost, "max-cost", 0, "most US dollars for the model and its workers (config: max_cost)")
	fl.Int64Var(&o.maxTokens, "max-tokens", 0, "most tokens for the model and its workers (config: max_tokens)")
	fl.IntVar(&o.maxWorkers, "max-workers", 0, "most workers running at once (config: max_workers, default 4)")
	fl.DurationVar(&o.timeout, "timeout", 0, "wall-clock limit of each turn, e.g. 30m (config: timeout)")
	fl.BoolVar(&o.kill, "kill-workers-on-exit", false, "stop the run's workers when you leave (config: kill_workers_on_exit)")
	return c
}

func runPilot(c *cobra.Command, o *pilotOptions, args []string) error {
	text := strings.TrimSpace(strings.Join(args, " "))
	switch {
	case o.resume != "" && o.dir != "":
		return cli.Usagef("--resume continues a run in its own dir: --dir cannot change it")
	case len(text) > runs.MaxMessageBytes:
		return cli.Usagef("the message is %d bytes; at most %d fit", len(text), runs.MaxMessageBytes)
	}
	rs, err := o.setup(c, text)
	if err != nil {
		return err
	}
	defer rs.closeLog()
	m, wc, set, client, log, n := rs.m, rs.wc, rs.set, rs.client, rs.log, rs.n
	pl := &pilotSession{c: c, io: o.f.io, m: m, wc: wc, n: n, stopWatch: func() {}, shown: map[string]bool{}}
	pl.p = newStepPrinter(pl.io, pl.io.Out, nil, set.Limits.MaxSteps, true)
	pl.p.pilot = true
	defer pl.p.close()
	pl.opt = orchestrator.Options{Sessions: m, StateDir: m.Store().Dir(), Client: client, Settings: set, OnEvent: pl.p.event, Log: log,
		Notify: n.Workers(m.Store().Dir())}
	return pl.session(o.resume, text)
}

// pilotSession is one conversation at the prompt. The run is made at the first
// turn (or resumed); one goroutine, the command's, drives it, and the
// signal goroutine only cancels.
type pilotSession struct {
	c         *cobra.Command
	io        *cli.Streams
	m         *sessions.Manager
	wc        *watchers.Config
	n         *notify.Notifier
	p         *stepPrinter
	opt       orchestrator.Options
	in        pilot.Input
	base      context.Context
	run       *orchestrator.Run
	stopWatch func()
	// shown are the inbox messages shown at the prompt (watchInbox).
	shown map[string]bool

	mu   sync.Mutex
	stop context.CancelFunc // the running turn's, else nil
	sig  os.Signal          // a signal that asks to leave
}

// errRunEnded: the run ended during a turn (a limit, a watcher), and that
// was printed.
var errRunEnded = &cli.SilentError{Code: cli.ExitFailure}

func (pl *pilotSession) session(resume, text string) error {
	// Ctrl+C is handled here: it must not end the whole command.
	pl.base = context.WithoutCancel(pl.c.Context())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	in, err := pilot.NewInput(pl.io, pl.io.Paint(cli.Bold, "you> "), pilotCommandNames())
	if err != nil {
		return err
	}
	pl.in = in
	defer in.Close()
	pl.in.UseHistory(filepath.Join(pl.m.Store().Dir(), pilot.HistoryFile))
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case s := <-sigs:
				pl.signal(s)
			case <-stop:
				return
			}
		}
	}()
	defer func() {
		close(stop)
		<-done
	}()

	if resume != "" {
		run, err := orchestrator.Resume(pl.base, pl.opt, resume)
		if err != nil {
			return err
		}
		pl.attach(run)
		pl.recap()
	}
	if pl.io.InTTY && pl.io.ErrTTY {
		fmt.Fprintln(pl.io.ErrOut, "Write what to do. :help lists the commands; Ctrl+C stops the model's turn; :quit or Ctrl+D leaves.")
	}
	if text != "" {
		if err := pl.turn(text); err != nil {
			return pl.leave(err)
		}
	}
	for {
		if pl.signalled() {
			return pl.leave(context.Canceled)
		}
		stopInbox := func() {}
		if pl.run != nil {
			stopInbox = pl.watchInbox(runs.RunDir(pl.m.Store().Dir(), pl.run.ID()))
		}
		line, err := pl.in.Line()
		stopInbox()
		switch {
		case pl.signalled(), errors.Is(err, pilot.ErrQuitKey), errors.Is(err, pilot.ErrClosed):
			return pl.leave(context.Canceled)
		case errors.Is(err, io.EOF):
			return pl.leave(nil)
		case err != nil:
			return pl.leave(fmt.Errorf("read your next turn: %w", err))
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		pl.in.Remember(line)
		if strings.HasPrefix(line, ":") {
			quit, err := pl.command(line)
			if err != nil {
				fmt.Fprintln(pl.io.ErrOut, "zwarm:", err)
			}
			if quit {
				return pl.leave(nil)
			}
			continue
		}
		if err := pl.turn(line); err != nil {
			return pl.leave(err)
		}
	}
}

// signal takes a signal: during a turn SIGINT stops the turn; at the
// prompt, or SIGTERM at any time, it leaves.
func (pl *pilotSession) signal(s os.Signal) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.stop != nil {
		pl.stop()
		if s != syscall.SIGTERM {
			return
		}
	}
	pl.sig = s
	pl.in.Close()
}

func (pl *pilotSession) signalled() bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.sig != nil
}

// attach takes the run the conversation works on: its watchers start,
// and the prompt's history goes to the state dir, which exists now.
func (pl *pilotSession) attach(run *orchestrator.Run) {
	pl.run = run
	pl.stopWatch = run.Watch(pl.base, pl.wc)
	pl.in.UseHistory(filepath.Join(pl.m.Store().Dir(), pilot.HistoryFile))
	if pl.io.InTTY && pl.io.ErrTTY {
		pl.p.echoed = true // the person's turns show where they typed them
	}
}

// turn gives the model a turn of the person's and prints how it ended.
func (pl *pilotSession) turn(text string) error {
	ctx, cancel := context.WithCancel(pl.base)
	defer cancel()
	pl.mu.Lock()
	pl.stop = cancel
	pl.mu.Unlock()
	defer func() {
		pl.mu.Lock()
		pl.stop = nil
		pl.mu.Unlock()
	}()
	var end orchestrator.TurnEnd
	var err error
	if pl.run == nil {
		run, serr := orchestrator.Start(ctx, pl.opt, text)
		if serr != nil {
			return serr
		}
		pl.attach(run)
		end, err = run.Work(ctx)
	} else {
		end, err = pl.run.Turn(ctx, text)
	}
	pl.p.close()
	switch {
	case end.Answered:
		pl.p.answer(end.Answer)
	case end.Ended:
		rec := pl.run.Record()
		pl.p.outcome(rec, resumeCommand(pl.c, rec))
		pl.n.Notify(orchestrator.FinishedEvent(pl.m.Store().Dir(), rec))
		pl.stopWatch()
		pl.run = nil // nothing is left to leave
		if err == nil {
			err = errRunEnded
		}
	}
	return err
}

// leave ends the conversation: the run is saved, interrupted, for
// --resume; err is the command's result.
func (pl *pilotSession) leave(err error) error {
	if pl.run == nil {
		return err
	}
	rec, qerr := pl.run.Quit(pl.base)
	pl.stopWatch()
	pl.p.close()
	if qerr != nil {
		return qerr
	}
	n := len(pl.run.Checkpoints())
	fmt.Fprintf(pl.io.ErrOut, "left run %s after %s; resume with: %s\n", record.ShortID(rec.ID), render.Plural(n, "turn"), resumeCommand(pl.c, rec))
	return err
}

package pilot

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

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/watchers"
	"github.com/zwarm/zwarm/watchers/notify"
)

// Options are what a conversation works with: the command's streams,
// manager, watchers and notifier, the run's options (their OnEvent is the
// Printer's), and how the command prints.
type Options struct {
	IO       *cli.Streams
	Manager  *sessions.Manager
	Watchers *watchers.Config
	Notifier *notify.Notifier
	Run      orchestrator.Options
	Printer  Printer
	View     View
	// Resume is the command line that continues a run.
	Resume func(*runs.Record) string
}

// Printer prints a run's steps as they come, as orchestrate does.
type Printer interface {
	Event(runs.Event)
	// Close ends what the printer shows while it waits (a spinner).
	Close()
	// Answer prints the model's answer that ended a turn, whole.
	Answer(text string)
	// Outcome prints how the run ended.
	Outcome(rec *runs.Record, resume string)
	// EchoTurns says the person's turns show where they typed them.
	EchoTurns()
}

// View prints what the prompt's commands show.
type View interface {
	Lines([]orchestrator.Line)
	Sessions([]*record.Session) error
}

// Converse runs a conversation until the person leaves or the run ends:
// it resumes the run resume, or starts one with the first turn, text if
// given. Ctrl+C during a turn stops the turn; at the prompt it leaves.
func Converse(ctx context.Context, opt Options, resume, text string) error {
	opt.Run.OnEvent = opt.Printer.Event
	pl := &Conversation{opt: opt, io: opt.IO, m: opt.Manager, stopWatch: func() {}, shown: map[string]bool{}}
	return pl.session(ctx, resume, text)
}

// Conversation is one conversation at the prompt. The run is made at the
// first turn (or resumed); one goroutine, the command's, drives it, and
// the signal goroutine only cancels.
type Conversation struct {
	opt       Options
	io        *cli.Streams
	m         *sessions.Manager
	in        Input
	base      context.Context
	run       *orchestrator.Run
	stopWatch func()
	// shown are the inbox messages shown at the prompt (watchInbox).
	shown map[string]bool

	mu   sync.Mutex
	stop context.CancelFunc // the running turn's, else nil
	sig  os.Signal          // a signal that asks to leave
}

// ErrRunEnded: the run ended during a turn (a limit, a watcher), and that
// was printed.
var ErrRunEnded = &cli.SilentError{Code: cli.ExitFailure}

func (pl *Conversation) session(ctx context.Context, resume, text string) error {
	// Ctrl+C is handled here: it must not end the whole command.
	pl.base = context.WithoutCancel(ctx)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	in, err := NewInput(pl.io, pl.io.Paint(cli.Bold, "you> "), commandNames())
	if err != nil {
		return err
	}
	pl.in = in
	defer in.Close()
	pl.in.UseHistory(filepath.Join(pl.m.Store().Dir(), HistoryFile))
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
		run, err := orchestrator.Resume(pl.base, pl.opt.Run, resume)
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
		case pl.signalled(), errors.Is(err, ErrQuitKey), errors.Is(err, ErrClosed):
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
func (pl *Conversation) signal(s os.Signal) {
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

func (pl *Conversation) signalled() bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.sig != nil
}

// attach takes the run the conversation works on: its watchers start,
// and the prompt's history goes to the state dir, which exists now.
func (pl *Conversation) attach(run *orchestrator.Run) {
	pl.run = run
	pl.stopWatch = run.Watch(pl.base, pl.opt.Watchers)
	pl.in.UseHistory(filepath.Join(pl.m.Store().Dir(), HistoryFile))
	if pl.io.InTTY && pl.io.ErrTTY {
		pl.opt.Printer.EchoTurns()
	}
}

// turn gives the model a turn of the person's and prints how it ended.
func (pl *Conversation) turn(text string) error {
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
		run, serr := orchestrator.Start(ctx, pl.opt.Run, text)
		if serr != nil {
			return serr
		}
		pl.attach(run)
		end, err = run.Work(ctx)
	} else {
		end, err = pl.run.Turn(ctx, text)
	}
	pl.opt.Printer.Close()
	switch {
	case end.Answered:
		pl.opt.Printer.Answer(end.Answer)
	case end.Ended:
		rec := pl.run.Record()
		pl.opt.Printer.Outcome(rec, pl.opt.Resume(rec))
		pl.opt.Notifier.Notify(orchestrator.FinishedEvent(pl.m.Store().Dir(), rec))
		pl.stopWatch()
		pl.run = nil // nothing is left to leave
		if err == nil {
			err = ErrRunEnded
		}
	}
	return err
}

// leave ends the conversation: the run is saved, interrupted, for
// --resume; err is the command's result.
func (pl *Conversation) leave(err error) error {
	if pl.run == nil {
		return err
	}
	rec, qerr := pl.run.Quit(pl.base)
	pl.stopWatch()
	pl.opt.Printer.Close()
	if qerr != nil {
		return qerr
	}
	n := len(pl.run.Checkpoints())
	fmt.Fprintf(pl.io.ErrOut, "left run %s after %s; resume with: %s\n", record.ShortID(rec.ID), render.Plural(n, "turn"), pl.opt.Resume(rec))
	// Its workers go on without it: said, as orchestrate says them.
	if list, lerr := pl.runWorkers(); lerr == nil {
		var running []string
		for _, s := range list {
			if !s.Settled() {
				running = append(running, record.ShortID(s.ID))
			}
		}
		if len(running) > 0 {
			fmt.Fprintf(pl.io.ErrOut, "still running: %s %s (zwarm wait, or zwarm kill, to end them)\n",
				render.Plural(len(running), "worker"), strings.Join(running, " "))
		}
	}
	return err
}

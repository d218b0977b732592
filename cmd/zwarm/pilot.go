package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/pilot"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/record"
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
	m, io := rs.m, o.f.io
	p := newStepPrinter(io, io.Out, nil, rs.set.Limits.MaxSteps, true)
	p.pilot = true
	defer p.close()
	return pilot.Converse(c.Context(), pilot.Options{IO: io, Manager: m, Watchers: rs.wc, Notifier: rs.n,
		Run: orchestrator.Options{Sessions: m, StateDir: m.Store().Dir(), Client: rs.client, Settings: rs.set, Log: rs.log, Tracer: rs.tracer,
			Notify: rs.n.Workers(m.Store().Dir())},
		Printer: pilotPrinter{p}, View: pilotView{io, m},
		Resume: func(rec *runs.Record) string { return resumeCommand(c, rec) }}, o.resume, text)
}

// pilotPrinter is orchestrate's printer of steps as the pilot's.
type pilotPrinter struct{ p *stepPrinter }

func (pp pilotPrinter) Event(ev runs.Event)                     { pp.p.event(ev) }
func (pp pilotPrinter) Close()                                  { pp.p.close() }
func (pp pilotPrinter) Answer(text string)                      { pp.p.answer(text) }
func (pp pilotPrinter) Outcome(rec *runs.Record, resume string) { pp.p.outcome(rec, resume) }
func (pp pilotPrinter) EchoTurns()                              { pp.p.echoed = true }

// pilotView prints the prompt's commands as the commands print runs and
// sessions.
type pilotView struct {
	io *cli.Streams
	m  *sessions.Manager
}

func (v pilotView) Lines(lines []orchestrator.Line) { writeRunLines(v.io, v.io.Out, lines) }
func (v pilotView) Sessions(list []*record.Session) error {
	return writeSessions(v.io, list, time.Now(), false, stallConfig(v.m))
}

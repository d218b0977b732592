package main

import (
	"context"
	"encoding/json"
	"fmt"
	stdio "io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/render"
	"github.com/zwarm/zwarm/sessions/watch"
	"github.com/zwarm/zwarm/watchers"
	"github.com/zwarm/zwarm/watchers/notify"
)

// watcherSection is the [watchers] table; every command must know it to
// read config.toml.
var watcherSection = watchers.ConfigSection()

// configured is where dash, orchestrate and watch start: the state dir's
// manager and its config.
func (f *factory) configured() (*sessions.Manager, *config.Config, error) {
	m, err := f.manager()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := m.Config()
	if err != nil {
		return nil, nil, err
	}
	return m, cfg, nil
}

// watched is the manager and its checked [watchers] settings: where dash
// and watch start.
func (f *factory) watched() (*sessions.Manager, *watchers.Config, error) {
	m, cfg, err := f.configured()
	if err != nil {
		return nil, nil, err
	}
	wc, err := watcherConfig(m, cfg)
	return m, wc, err
}

// watcherConfig is the [watchers] settings of cfg, checked.
func watcherConfig(m *sessions.Manager, cfg *config.Config) (*watchers.Config, error) {
	wc := watchers.FromConfig(cfg)
	if err := wc.Validate(); err != nil {
		return nil, &config.Error{Path: filepath.Join(m.Store().Dir(), config.File), Err: err}
	}
	return wc, nil
}

type watchOptions struct {
	f      *factory
	ids    []string
	all    bool
	json   bool
	notify bool
}

func newWatchCmd(f *factory) *cobra.Command {
	o := &watchOptions{f: f}
	c := &cobra.Command{
		Use:   "watch [ID...]",
		Short: "Run the worker watchers on your sessions and print their alerts",
		Long: `watch follows the sessions you spawned (or the ones named, or --all) and runs the
worker watchers on them until Ctrl+C: stall (a running session that printed
nothing for [watchers.stall] after, or nothing in its turn within first_event),
failure (it failed or was killed), hollow (a turn completed with no message and
no change), cost_guard (past max_tokens or max_cost it is stopped) and overlap
(two workers of one repository whose changes are not landed yet change the
same file). Each
alert is printed as it happens; --json prints one JSON object per line with
watcher, session_id, action (nudge, or stop when cost_guard stopped it),
reason, at, status, task and source. Without ids it follows the orchestrator
runs too: a run that asks a question or ends is a line ("run asks", with how to
answer; "run ended"), and in --json an object with event (run.asks or
run.finished), run_id, text, status, task, at and options. Sessions that failed
before watch started are not reported. Settings come from the [watchers.NAME]
tables of config.toml. The [notify] command runs for what watch sees (once per
event, whichever zwarm process sees it first); --notify also rings this terminal.`,
		Example: `  zwarm watch                 # the sessions you spawn, until Ctrl+C
  zwarm watch --json | jq -r 'select(.watcher == "stall") | .session_id'
  zwarm watch --all           # orchestrator and MCP workers too`,
		RunE: func(c *cobra.Command, args []string) error {
			o.ids = args
			return runWatch(c, o)
		},
		ValidArgsFunction: completeIDs(f, func(s *record.Session) bool { return !s.Settled() }),
	}
	c.Flags().BoolVar(&o.all, "all", false, "every session, not only those you spawned (orchestrator runs' and MCP's too)")
	c.Flags().BoolVar(&o.json, "json", false, "print one JSON object per alert")
	c.Flags().BoolVar(&o.notify, "notify", false, "ring the terminal for the [notify] events (BEL, and OSC 9 where shown)")
	return c
}

func runWatch(c *cobra.Command, o *watchOptions) error {
	if o.all && len(o.ids) > 0 {
		return cli.Usagef("give session ids or --all, not both")
	}
	m, wc, err := o.f.watched()
	if err != nil {
		return err
	}
	path := filepath.Join(m.Store().Dir(), config.File)
	if !wc.Stall.Enabled && !wc.Failure.Enabled && !wc.Hollow.Enabled && !wc.CostGuard.Enabled && !wc.Overlap.Enabled {
		return &config.Error{Path: path, Err: fmt.Errorf("[watchers]: stall, failure, hollow, cost_guard and overlap are all disabled: there is nothing to watch")}
	}
	log, closeLog, err := fileLogger(m.Store().Dir())
	if err != nil {
		return err
	}
	defer closeLog()
	io := o.f.io
	cfg, err := m.Config()
	if err != nil {
		return err
	}
	var bell stdio.Writer
	if o.notify && io.ErrTTY {
		bell = io.ErrOut
	}
	n, err := o.f.notifier(m, cfg, bell, log)
	if err != nil {
		return err
	}
	var filter listing.Options
	what := "watching the sessions you spawn and the runs"
	switch {
	case len(o.ids) > 0:
		what = "watching " + strings.Join(shortIDs(o.ids), " ")
	case o.all:
		what = "watching every session and the runs"
	default:
		filter.Source = record.UserSource
	}
	var prog *cli.Progress
	if !o.json {
		prog = cli.StartProgress(io, what+" · Ctrl+C stops")
	}
	defer prog.Stop()
	shown := map[string]bool{}
	w := watchers.NewWorkers(wc, watchers.WorkerOptions{Killer: m, Log: log, Notify: n.Workers(m.Store().Dir()), OnUpdate: func(u watch.Update) {
		// The progress lists what runs, and how what it listed ended.
		if u.Session != nil && (!u.Session.Settled() || shown[u.ID]) {
			shown[u.ID] = true
			prog.Update(u)
		}
	}})
	ctx, cancel := context.WithCancel(c.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- w.Watch(ctx, m, filter, o.ids...) }()
	// The runs too, unless sessions were named: a run that asks a question
	// or stops is told (the [notify] command, the bell) and printed.
	notices := make(chan runNotice)
	runsDone := make(chan error, 1)
	if len(o.ids) == 0 {
		go func() {
			runsDone <- orchestrator.WatchRuns(ctx, m.Store().Dir(), func(ev notify.Event, rec *runs.Record) {
				n.Notify(ev)
				select {
				case notices <- runNoticeOf(ev, rec):
				case <-ctx.Done():
				}
			})
		}()
	} else {
		runsDone <- nil
	}
	enc := json.NewEncoder(io.Out)
	var werr error
	emit := func(v any, line func() string) {
		if o.json {
			if werr == nil {
				werr = enc.Encode(v)
			}
			return
		}
		prog.Print(func() { fmt.Fprintln(io.Out, line()) })
	}
	for alerts := w.Alerts(); alerts != nil; {
		select {
		case a, ok := <-alerts:
			if !ok {
				alerts = nil
				continue
			}
			emit(a, func() string { return alertLine(io, a) })
		case rn := <-notices:
			emit(rn, func() string { return rn.line(io) })
		}
	}
	cancel()
	rerr := <-runsDone
	if err := <-errc; err != nil {
		return err
	}
	if rerr != nil {
		return fmt.Errorf("watch the runs: %w", rerr)
	}
	return werr
}

// alertLine is an alert for people: time, watcher, session, reason, task.
func alertLine(io *cli.Streams, a watchers.Alert) string {
	colour := cli.Yellow
	if a.Action == watchers.Stop || a.Watcher == "failure" {
		colour = cli.Red
	}
	name := fmt.Sprintf("%-10s", a.Watcher)
	if a.Action == watchers.Stop {
		name = fmt.Sprintf("%-10s", a.Watcher+" ■")
	}
	line := fmt.Sprintf("%s  %s  %s  %s", a.At.Local().Format("15:04:05"), io.Paint(colour, name), record.ShortID(a.SessionID), render.SafeLine(a.Reason))
	if a.Error != "" {
		line += " (" + render.SafeLine(a.Error) + ")"
	}
	return line + "  · " + render.Clip(a.Task, 60)
}

func shortIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = record.ShortID(id)
	}
	return out
}

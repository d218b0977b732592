// Package tui is zwarm's live dashboard: a Bubble Tea program that shows
// every session of a state directory and the selected one's trajectory as
// it happens, and lets the user send follow-ups, kill, delete, review a
// worker's diff and land it.
//
// Orchestrator runs are rows of their own, their workers under them;
// selecting a run shows its steps as `zwarm orchestrate` prints them.
//
// The root model owns the panes (header, sessionlist, detail, prompt, and
// diffview, which takes the place of the list and the detail while it is
// open), each a common.Component embedding the styles and keys they share,
// and routes sizes, messages and key help to them through that contract.
// Everything from outside (file changes, session and run records,
// trajectory and event reads, diffs, the results of actions) arrives as
// messages produced by commands; Update itself never blocks or touches the
// disk.
package tui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	// Sets the terminal background before Bubble Tea's init would ask the
	// terminal for it, stalling every command where nothing answers.
	_ "early/termbg"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/watch"
	"github.com/zwarm/zwarm/tui/common"
	"github.com/zwarm/zwarm/tui/detail"
	"github.com/zwarm/zwarm/tui/diffview"
	"github.com/zwarm/zwarm/tui/header"
	"github.com/zwarm/zwarm/tui/prompt"
	"github.com/zwarm/zwarm/tui/sessionlist"
	"github.com/zwarm/zwarm/watchers"
	"github.com/zwarm/zwarm/watchers/notify"
)

// Sessions is what the dashboard needs of zwarm's sessions; *sessions.Manager
// satisfies it. Everything it shows arrives through subscriptions, but a
// worker's diff, read when the user asks for it.
type Sessions interface {
	Subscribe(context.Context, watch.SubscribeOptions) (*watch.Subscription, error)
	Inject(context.Context, string, string) (*sessions.InjectResult, error)
	// Interrupt is Inject that first stops the running turn.
	Interrupt(context.Context, string, string) (*sessions.InjectResult, error)
	KillReport(ctx context.Context, id, reason string) (*sessions.Killed, error)
	Remove(context.Context, string, bool) (string, error)
	Diff(context.Context, string, io.Writer, sessions.DiffRequest) (*record.Session, error)
	Land(context.Context, string, sessions.LandOptions) (*sessions.LandResult, error)
}

// Runs subscribes to orchestrator runs, as runs.Subscribe does; RunsOf
// gives the runs of a state dir.
type Runs func(context.Context, runs.SubscribeOptions) (*runs.Subscription, error)

// RunsOf is the runs of a state dir.
func RunsOf(stateDir string) Runs {
	return func(ctx context.Context, opt runs.SubscribeOptions) (*runs.Subscription, error) {
		return runs.Subscribe(ctx, stateDir, opt)
	}
}

// SendRun gives a run (by full id) a message from the person, as
// runs.Send does.
type SendRun func(ctx context.Context, runID string, kind runs.MessageKind, text, questionID string) (*runs.InboxEntry, error)

// SendRunOf sends to the runs of the state dir stateDir.
func SendRunOf(stateDir string) SendRun {
	return func(ctx context.Context, runID string, kind runs.MessageKind, text, questionID string) (*runs.InboxEntry, error) {
		return runs.Send(ctx, runs.RunDir(stateDir, runID), kind, text, questionID)
	}
}

// Options configure a dashboard.
type Options struct {
	Sessions Sessions
	// Runs, if set, adds the orchestrator runs and their steps.
	Runs Runs
	// NotifyRun, if set, is told of each change of a run's record after
	// the first load (prev: the record before), off the UI goroutine.
	NotifyRun func(prev, cur *runs.Record)
	// SendRun, if set, gives a run a message from the person or an answer
	// to its question (i on a run), as runs.Send does; SendRunOf makes one.
	SendRun SendRun
	// StateDir is shown in the header.
	StateDir string
	// Dir is where a landing is asked from, as `zwarm land` run there: the
	// branch checked out there is the one it lands into. "" is the current
	// directory.
	Dir string
	// Now is the clock; tests fix it.
	Now func() time.Time
	// Window bounds how much of each turn file the detail pane reads.
	Window int64
	// Tick is how often runtimes refresh while a session runs; 0 means once
	// a second, negative never (tests). With nothing running, nothing ticks.
	Tick time.Duration
	Log  *slog.Logger
	// Alerts are the worker watchers' (Run starts them); nil for none.
	Alerts <-chan watchers.Alert
	// Attach, if set, is the command that attaches the person to a
	// session (A), as zwarm attach does; interrupt stops its running turn
	// first. The dashboard gives it the terminal while it runs.
	Attach AttachCommand
}

// AttachCommand makes the command that attaches to session id.
type AttachCommand func(id string, interrupt bool) tea.ExecCommand

type focus int

const (
	focusList focus = iota
	focusDetail
)

// Model is the dashboard's root model. Its Common has the screen's size.
type Model struct {
	common.Common
	ctx    context.Context
	opt    Options
	header header.Model
	list   sessionlist.Model
	detail detail.Model
	prompt prompt.Model
	diff   diffview.Model
	help   help.Model

	focus    focus
	showHelp bool
	// interrupted says Ctrl+C quit the dashboard: the command exits 130,
	// as for any command Ctrl+C ends; q quits with 0.
	interrupted bool
	status      string
	statusErr   bool
	// priceNote names the models whose cost reads "?", and how to price
	// them: the status line says it when it has nothing else to say.
	priceNote string
	queued    *queuedNote // what the status line says is queued
	// loaded says the first load of the sessions (and of the runs) is
	// complete.
	loaded                     bool
	sessionsSynced, runsSynced bool
	// runNotices is closed once the last batch of run notices was told:
	// the next batch waits for it (notifyRuns).
	runNotices chan struct{}
	// pending is how many sessions follow the listing in updates of their
	// own while the first load goes on.
	pending int
	// ticking says a tick is scheduled; frame animates the status line's
	// spinner, one step a tick.
	ticking bool
	frame   int

	// listSub follows every session; trajSub the selected one's events.
	listSub, trajSub *watch.Subscription
	// alerts are the watchers' latest alert per session, while it stands.
	alerts map[string]watchers.Alert
	// killedHere are the sessions the person killed from this dashboard:
	// the failure watcher's alert of that kill tells them nothing.
	killedHere map[string]bool
	// runListSub follows every run; runTrajSub the selected run's events.
	runListSub, runTrajSub *runs.Subscription
	// trajID is the key of the selected row (sessionlist.Row.Key).
	trajID string
	// landing is what the open land confirmation asks about.
	landing landPlan
	// terminal is the screen the program draws on, which another program
	// can be given for a while (attach); nil off a terminal.
	terminal suspender
}

// New returns the dashboard's model. ctx bounds the actions it runs.
func New(ctx context.Context, opt Options) Model {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Window == 0 {
		opt.Window = 8 << 20
	}
	if opt.Tick == 0 {
		opt.Tick = time.Second
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c := common.New()
	m := Model{
		Common: c, ctx: ctx, opt: opt,
		header: header.New(c, opt.StateDir),
		list:   sessionlist.New(c),
		detail: detail.New(c),
		prompt: prompt.New(c),
		diff:   diffview.New(c),
		help:   help.New(),
	}
	m.list.SetNow(opt.Now())
	m.list.SetFocused(true)
	m.header.SetLoading(true, 0, 0)
	return m
}

// Init loads the sessions and the runs and starts listening for changes.
// The clock starts once a session or a run is seen running.
func (m Model) Init() tea.Cmd {
	return tea.Batch(m.subscribe(listFeed, "", listOptions), m.subscribeRuns(listFeed, runs.SubscribeOptions{}),
		nextAlert(m.opt.Alerts))
}

// listOptions follow every session, the settled ones in a listing: the
// dashboard reads a session's summary when its row is shown, and its
// record whole when it is selected or running.
var listOptions = watch.SubscribeOptions{Listing: true}

// Run runs the dashboard on the terminal until the user quits or ctx ends,
// with the worker watchers of cfg (nil: their defaults) on the active
// sessions of the state dir, telling n (if not nil) what they see and
// what the runs do; attach, if not nil, attaches the person to a session
// (A).
func Run(ctx context.Context, mgr Sessions, stateDir string, cfg *watchers.Config, log *slog.Logger, n *notify.Notifier, attach AttachCommand, progOpts ...tea.ProgramOption) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var killer watchers.Killer
	if k, ok := mgr.(watchers.Killer); ok {
		killer = k
	}
	var told watchers.WorkerNotifier
	var notifyRun func(prev, cur *runs.Record)
	if n != nil {
		told = n.Workers(stateDir)
		notifyRun = func(prev, cur *runs.Record) {
			if ev, ok := orchestrator.RunNotice(stateDir, prev, cur); ok {
				n.Notify(ev)
			}
		}
	}
	w := watchers.NewWorkers(cfg, watchers.WorkerOptions{Killer: killer, Log: log, Notify: told})
	watched := make(chan error, 1)
	go func() { watched <- w.Watch(ctx, mgr, listing.Options{Active: true}) }()
	defer func() { cancel(); <-watched }()
	m := New(ctx, Options{Sessions: mgr, Runs: RunsOf(stateDir), SendRun: SendRunOf(stateDir), NotifyRun: notifyRun, StateDir: stateDir, Log: log, Alerts: w.Alerts(), Attach: attach})
	// ctx carries the signals (the command's SIGINT and SIGTERM end it):
	// Bubble Tea's own handler would answer the same signal too and block
	// forever sending its quit to a program ctx already ended.
	final, err := runOnTerminal(m, append([]tea.ProgramOption{tea.WithContext(ctx), tea.WithoutSignalHandler()}, progOpts...))
	if fm, ok := final.(Model); ok {
		fm.Close()
		if fm.interrupted && err == nil {
			return ErrInterrupted
		}
	}
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}

// ErrInterrupted is Run's error when Ctrl+C quit the dashboard.
var ErrInterrupted = fmt.Errorf("the dashboard was quit with Ctrl+C: %w", context.Canceled)

// Close ends the dashboard's subscriptions.
func (m Model) Close() {
	for _, sub := range []*watch.Subscription{m.listSub, m.trajSub} {
		if sub != nil {
			sub.Close()
		}
	}
	for _, sub := range []*runs.Subscription{m.runListSub, m.runTrajSub} {
		if sub != nil {
			sub.Close()
		}
	}
}

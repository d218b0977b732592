package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/zwarm/zwarm/orchestrator/model"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/orchestrator/shell"
	"github.com/zwarm/zwarm/orchestrator/tools"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/telemetry"
	"github.com/zwarm/zwarm/watchers"
)

// Sessions is the session core as a run uses it; *sessions.Manager
// implements it.
type Sessions = tools.Sessions

// Options configure a run.
type Options struct {
	Sessions Sessions
	// StateDir holds runs/ (the session manager's state dir).
	StateDir string
	Client   model.Client
	Settings Settings
	// Guard is asked before every model call; nil lets every step run.
	Guard Guard
	// OnEvent sees every event as it is written to events.jsonl, on the
	// run's goroutine: it must not block for long.
	OnEvent func(runs.Event)
	// Prompt, if set, puts the model's question to the person on the
	// run's terminal (Settings.Ask) and returns the answer; it must
	// return when ctx ends, which it does when the answer came another
	// way. An error leaves the question to the run's inbox.
	Prompt func(ctx context.Context, q runs.Question) (string, error)
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
	// Notify, if set, is told what the run's worker watchers see.
	Notify watchers.WorkerNotifier
	// Tracer sends the run's spans as its events come; nil with telemetry
	// off. The caller closes it.
	Tracer *telemetry.Tracer
}

// Run is one orchestrated task: its state on disk and the loop that
// advances it. Start or Resume one, then Execute it once.
type Run struct {
	opt  Options
	set  Settings
	dir  string
	lock *runs.RunLock

	mu  sync.Mutex // guards rec for Record
	rec *runs.Record

	items  []json.RawMessage // the conversation
	convo  *runs.Journal
	events *runs.Journal

	sh      *shell.Manager
	group   *proc.Group // the cgroup of the shell's commands, or nil
	reg     *tools.Registry
	seen    *tools.Seen
	prices  record.Prices
	summary *string // set by finish
	// silent counts the model's replies in a row that called no tool (in
	// a run that is not a pilot's, where such a reply answers the person).
	silent  int
	started time.Time
	workers []*record.Session       // as of the last refresh
	files   map[string]changedFiles // the files of each worker's change, for the observation
	counts  runs.Totals
	calls   []watchers.Call
	// spans builds the run's trace as its events come (telemetry on).
	spans    *runs.Spans
	callIDs  map[string]bool // every call_id of the conversation (nil: not yet gathered)
	messages []watchers.Message
	nudges   []watchers.Nudged
	// toldBefore counts the nudges (by watcher and message) given before
	// the run was resumed: watchers that do not remember them may say
	// them again, and each is not repeated.
	toldBefore map[string]int
	resumed    bool
	unpriced   bool // the model's price is unknown (said once)
	// given are the inbox messages this process gave the model (by
	// number); answered the questions that got their answer, asked their
	// texts; settle the entries to mark once the step is durable.
	given    map[int]bool
	answered map[string]bool
	asked    map[string]string
	settle   []runs.InboxEntry
	// unanswered is the question the run stopped waiting on, as a resume
	// finds it: nothing answered it and the model did nothing after it.
	unanswered *runs.Question
	// overhead is the tokens of a request beyond its items' bytes/4, as the
	// last call's count showed: tool definitions and formatting.
	overhead int64
	// answer is set, in a pilot run, by a reply that called no tool: it
	// ends the turn. ended: the run ended and takes no more turns.
	answer *string
	ended  bool
}

// Start creates a run for task and writes its first state.
func Start(ctx context.Context, opt Options, task string) (*Run, error) {
	if strings.TrimSpace(task) == "" {
		return nil, errors.New("the task is empty: say what the run should achieve")
	}
	set, err := checkOptions(&opt)
	if err != nil {
		return nil, err
	}
	id := uuid.NewString()
	dir := runs.RunDir(opt.StateDir, id)
	if err := os.MkdirAll(filepath.Dir(dir), runs.DirPerm); err != nil {
		return nil, fmt.Errorf("state dir %s is not usable: %w", opt.StateDir, err)
	}
	if err := state.CheckNoSymlinks(opt.StateDir, filepath.Dir(dir)); err != nil {
		return nil, err // the run would be made wherever runs/ points
	}
	if err := os.Mkdir(dir, runs.DirPerm); err != nil {
		return nil, fmt.Errorf("create run %s: %w", id, err)
	}
	now := time.Now().UTC()
	zero := 0.0
	rec := &runs.Record{Version: runs.RecordVersion, ID: id, Task: task, Model: set.Model, Dir: set.Dir, Status: runs.StatusRunning, CostUSD: &zero,
		Limits: set.Limits, CreatedAt: now, UpdatedAt: now, Workers: []string{}, Accounts: map[string]runs.Account{},
		Adapter: set.Adapter, WorkerModel: set.WorkerModel, Isolation: set.Isolation, Runner: set.Runner, KillWorkersOnExit: set.KillWorkersOnExit,
		Pilot: set.Pilot}
	r := &Run{opt: opt, set: set, dir: dir, rec: rec}
	r.traceWith(nil)
	r.initPerson()
	// Until run.json is written, a failure leaves nothing behind.
	fail := func(err error) (*Run, error) {
		r.release()
		os.RemoveAll(dir)
		return nil, err
	}
	if err := r.open(); err != nil {
		return fail(err)
	}
	first := []json.RawMessage{message("developer", systemPrompt(set, r.worktrees(ctx))), message("user", taskMessage(task))}
	if set.Pilot {
		first[1] = message("user", turnMessage(1, task)) // the person's first turn
	}
	if err := r.appendItems(first...); err != nil {
		return fail(err)
	}
	lim := set.Limits
	r.emit(runs.Event{Type: runs.EventStarted, Task: task, Model: set.Model, Dir: set.Dir, Limits: &lim})
	opt.Log.Info("orchestrator: run started", "run", id, "model", set.Model, "dir", set.Dir)
	if err := r.save(); err != nil {
		return fail(err)
	}
	return r, nil
}

// checkOptions validates what a run needs and fills in defaults.
func checkOptions(opt *Options) (Settings, error) {
	set := opt.Settings
	set.defaults()
	switch {
	case state.InSupervisor():
		// A supervisor reaps every child it has: the run's shell processes
		// would lose their exit statuses to it (sessions/doc.go).
		return set, errors.New("orchestrator: a run cannot be started inside a session supervisor")
	case opt.Sessions == nil || opt.Client == nil || opt.StateDir == "":
		return set, errors.New("orchestrator: Sessions, Client and StateDir are required")
	case set.Dir == "":
		return set, errors.New("orchestrator: the run's dir is required")
	}
	abs, err := filepath.Abs(set.Dir)
	if err != nil {
		return set, err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return set, fmt.Errorf("the run's dir %s is not a directory", abs)
	}
	set.Dir = abs
	if set.Pilot {
		set.Ask = false // the model asks by answering: the person writes back
	}
	if opt.Guard == nil {
		opt.Guard = NoGuard{}
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return set, nil
}

// open takes the run: its lock, its owner record, its journals, its tools.
func (r *Run) open() error {
	lock, err := runs.LockRun(r.dir)
	if err != nil {
		return fmt.Errorf("run %s: %w", record.ShortID(r.rec.ID), err)
	}
	// On failure the caller releases what was taken.
	r.lock = lock
	self, err := proc.RefOf(os.Getpid())
	if err != nil {
		return fmt.Errorf("run %s: %w", r.rec.ID, err)
	}
	r.rec.Owner = self
	if r.convo, err = runs.OpenJournal(filepath.Join(r.dir, runs.ConversationFile)); err == nil {
		r.events, err = runs.OpenJournal(filepath.Join(r.dir, runs.EventsFile))
	}
	if err != nil {
		return err
	}
	cfg, err := r.opt.Sessions.Config()
	if err != nil {
		return err
	}
	r.prices = cfg.PriceTable()
	r.started = time.Now()
	gctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	r.group = r.openGroup(gctx)
	cancel()
	r.initTools()
	return nil
}

func (r *Run) initTools() {
	r.seen = tools.NewSeen(r.rec.Seen)
	list := tools.Workers(tools.WorkerOptions{
		Sessions: r.opt.Sessions, Source: record.RunSource(r.rec.ID), Dir: r.set.Dir, AllowedDirs: r.set.AllowedDirs,
		MaxWorkers: r.set.Limits.MaxWorkers, DefaultAdapter: r.set.Adapter, DefaultModel: r.set.WorkerModel,
		Isolation: r.set.Isolation, Runner: r.set.Runner, Seen: r.seen, Progress: r.progress, OnSpawn: r.spawned,
	})
	sopt := shell.Options{Dir: r.set.Dir, Log: r.opt.Log}
	if r.group != nil {
		sopt.Cgroup = r.group.File()
	}
	r.sh = shell.New(sopt)
	list = append(list, tools.Shell(r.sh, tools.Dirs{Base: r.set.Dir, Allowed: r.set.AllowedDirs})...)
	list = append(list, tools.Sleep())
	if !r.set.Pilot {
		// A pilot run ends when the person leaves, not when the model
		// says it is done: it answers instead.
		list = append(list, tools.Finish(func(s string) { r.summary = &s }))
	}
	if r.set.Ask {
		list = append(list, tools.AskUser(r.ask))
	}
	reg, err := tools.NewRegistry(list...)
	if err != nil {
		panic(err) // the tool set is fixed: a clash is a programming error
	}
	r.reg = reg
}

// ID is the run's id.
func (r *Run) ID() string { return r.rec.ID }

// Dir is the run's state directory.
func (r *Run) Dir() string { return r.dir }

// Tools are the tools the run offers its model.
func (r *Run) Tools() *tools.Registry { return r.reg }

// Record returns a copy of run.json as it is now.
func (r *Run) Record() *runs.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec.Clone()
}

func (r *Run) progress(p tools.Progress) {
	ev := runs.Event{Type: runs.EventWorker, Text: p.Text, Step: r.rec.Steps}
	if p.Session != nil {
		ev.Session = p.Session.ID
	}
	r.emit(ev)
}

// spawned adds a worker to the run's, or, for a call among a reply's
// delegate calls made at once, to their order (spawnOrder).
func (r *Run) spawned(ctx context.Context, s *record.Session) {
	if at, ok := ctx.Value(spawnAtKey{}).(spawnAt); ok {
		at.order.mu.Lock()
		at.order.ids[at.call] = s.ID
		at.order.mu.Unlock()
		return
	}
	r.addWorkers(s.ID)
}

// addWorkers adds workers to the run's, each once; "" is none.
func (r *Run) addWorkers(ids ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if id != "" && !slices.Contains(r.rec.Workers, id) {
			r.rec.Workers = append(r.rec.Workers, id)
		}
	}
}

// spawnOrder keeps the workers of a reply's delegate calls made at once
// in the order of the calls, not of their starts: the run lists them as
// the model asked for them.
type spawnOrder struct {
	mu  sync.Mutex
	ids []string // by call
}

type spawnAtKey struct{}

// spawnAt is a call's place in its spawnOrder.
type spawnAt struct {
	order *spawnOrder
	call  int
}

// emit writes an event (made durable at the next sync) and shows it.
func (r *Run) emit(ev runs.Event) {
	ev.Time, ev.Run = time.Now().UTC(), r.rec.ID
	b, err := json.Marshal(ev)
	if err == nil {
		err = r.events.Append(false, b)
	}
	if err != nil {
		r.opt.Log.Error("write event", "err", err)
	}
	if r.spans != nil {
		r.spans.Add(ev)
	}
	if r.opt.OnEvent != nil {
		r.opt.OnEvent(ev)
	}
}

// traceWith starts the run's spans, with telemetry on: earlier are the
// events of a run resumed, taken in again to know where it stands.
func (r *Run) traceWith(earlier []runs.Event) {
	if r.opt.Tracer == nil {
		return
	}
	r.spans = &runs.Spans{Emit: func(...telemetry.Span) {}, Content: r.opt.Tracer.Content()}
	for _, ev := range earlier {
		r.spans.Add(ev)
	}
	r.spans.Emit = r.opt.Tracer.Emit
}

// appendItems adds items to the conversation; save makes them durable at
// the step's end. A crash before that loses at most the step's tail, which
// resume repairs (a call whose result was lost gets one saying so).
func (r *Run) appendItems(items ...json.RawMessage) error {
	lines := make([][]byte, len(items))
	for i, it := range items {
		lines[i] = it
	}
	if err := r.convo.Append(false, lines...); err != nil {
		return err
	}
	r.items = append(r.items, items...)
	return nil
}

// save makes the step durable: the conversation, the events, then
// run.json (a reader of run.json finds the files it summarizes).
func (r *Run) save() error {
	if err := r.convo.Sync(); err != nil {
		return err
	}
	if err := r.events.Sync(); err != nil {
		return err
	}
	r.mu.Lock()
	r.rec.UpdatedAt = time.Now().UTC()
	r.rec.Seen = r.seen.Snapshot()
	rec := r.rec.Clone()
	r.mu.Unlock()
	return runs.WriteRecord(r.dir, rec)
}

// release lets go of what open took, without writing an outcome.
func (r *Run) release() {
	if r.sh != nil {
		r.sh.Close()
	}
	r.closeGroup()
	if r.convo != nil {
		r.convo.Close()
	}
	if r.events != nil {
		r.events.Close()
	}
	if r.lock != nil {
		r.lock.Unlock()
	}
}

// Package supervisor is the body of `zwarm __supervise ID`: the detached
// process that owns one session while it has work. It runs the agent's
// turns one after another, records their output in the turn files, feeds
// follow-ups, commits the worker's changes at each turn's end and stops
// the agent when asked; everything else (CLI, dashboard, orchestrator)
// reads and changes sessions through package sessions, in other processes.
//
// The supervisor changes its session's record only through the narrow
// turn API of the lifecycle (state.Turns): Claim, Prepared, EndTurn,
// HandOver, RequestStop (a stop at a job's time limit) and the progress
// of a running turn. It never sets a status. While a turn runs it asks
// the record whether the turn is to be interrupted (InterruptAsked),
// locally and in a Slurm job alike, and stops the agent as a kill would.
//
// A supervisor is a child subreaper that waits for every child it has
// (wait4(-1)): no other code may start processes in a supervisor process,
// or the supervisor would take their exit statuses (see
// state.InSupervisor).
//
// Only the `__supervise` command imports this package.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/telemetry"
	"golang.org/x/sys/unix"
)

// flushEvery bounds how often a running turn's progress is written to
// meta.json: often enough for listings to be current, rarely enough that a
// chatty agent does not turn into a stream of file replacements.
const flushEvery = 250 * time.Millisecond

// supervisor runs the turns of one session, one after another, until no
// follow-up is queued. It is the only process that starts agents.
type supervisor struct {
	// left says a signal handed the job's outcome to its scheduler: the
	// supervisor stops its agent and records nothing more.
	left     *atomic.Bool
	st       *state.Store
	turns    *state.Turns
	adapters agent.Adapters
	sections []config.Section
	guard    []string // Options.GuardArgv
	id       string
	log      *slog.Logger
	cg       *cgroup // nil: marker-only containment
	// contained: the supervisor makes the session's cgroup once it has
	// claimed the session (Supervise; Run, in a test's process, does not).
	contained bool
	// stop ends the run as a signal does: the agent is stopped.
	stop context.CancelFunc
	// tracer sends the turns' spans; nil with telemetry off.
	tracer *telemetry.Tracer
}

// fenced stops the run when a write was refused because the session has
// another owner now: this supervisor may not go on recording, and its
// agent must not go on working unrecorded.
func (sv *supervisor) fenced(err error) {
	if errors.Is(err, state.ErrFenced) && sv.stop != nil {
		sv.log.Warn("the session has another owner now: stopping the agent, recording nothing more", "err", err)
		sv.stop()
	}
}

// Options configure a supervisor.
type Options struct {
	Store    *state.Store
	Adapters agent.Adapters
	// ConfigSections are the config.toml tables other packages own, so the
	// supervisor reads the same config as the command that spawned it.
	ConfigSections []config.Section
	// GuardArgv, if set, is the command that runs an agent under a
	// proc.Guard (the agent's argv follows it): killed outright, the
	// supervisor takes every process of the agent with it at once.
	// Without it the agent dies with the supervisor, and what it started
	// apart is found by the next zwarm command.
	GuardArgv []string
}

// Supervise is the body of `zwarm __supervise ID`: it owns the session until
// its last turn ends. SIGTERM or SIGINT stop it the way `zwarm kill` asks:
// the agent gets SIGTERM, a grace period, then SIGKILL, and every process of
// the session is gone before the kill is recorded.
func Supervise(ctx context.Context, opt Options, id string) error {
	turns, err := opt.Store.Own(id)
	if err != nil {
		return err
	}
	state.ActAsSupervisor()
	logf, err := turns.Files.OpenLog()
	if err != nil {
		return fmt.Errorf("supervise %s: %w", id, err)
	}
	defer logf.Close()
	log := slog.New(slog.NewTextHandler(logf, nil)).With("session", id)

	if err := becomeSubreaper(); err != nil {
		log.Warn("cannot become child subreaper; escaped descendants are found by marker only", "err", err)
	}
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	var left atomic.Bool
	// A job's own scheduler judges it when zwarm did not ask for the stop.
	schedulers := func() bool { s, err := opt.Store.Load(id); return err == nil && s.Stop == nil && state.Remote(s) }
	ctx, stopListening := stopOnSignal(ctx, turns, log, schedulers, &left)
	defer stopListening()

	if job := slurmJob(); job != "" {
		turns.RunsAsJob(job)
	}
	sv := newSupervisor(opt, turns, log)
	sv.left = &left
	release := holdSession(ctx, turns, log)
	defer release()
	sv.contained = true
	log.Info("supervisor started", "pid", turns.Self.PID)
	ctx, gone := context.WithCancel(ctx)
	sv.stop = gone
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		sv.watchDir(ctx, gone)
	}()
	err = sv.run(ctx)
	gone()
	<-watched
	sv.closeCgroup()
	sv.tracer.Close()
	if err != nil {
		log.Error("supervisor failed", "err", err)
	} else {
		log.Info("supervisor done")
	}
	return err
}

// Run runs the session's turns in this process, logging to log, without
// what makes a process a supervisor: its log file, its handling of
// signals, child subreaping, the supervisor lock and the session's cgroup.
// It is what Supervise does inside all that, for running a session within
// another process (a test) that has no other children meanwhile.
func Run(ctx context.Context, opt Options, id string, log *slog.Logger) error {
	turns, err := opt.Store.Own(id)
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	sv := newSupervisor(opt, turns, log)
	defer sv.tracer.Close()
	sv.stop = stop
	return sv.run(ctx)
}

func newSupervisor(opt Options, turns *state.Turns, log *slog.Logger) *supervisor {
	sv := &supervisor{st: opt.Store, turns: turns, adapters: opt.Adapters, sections: opt.ConfigSections,
		guard: opt.GuardArgv, id: turns.ID, log: log}
	if cfg, err := config.Load(sv.st.Dir(), sv.sections...); err == nil {
		turns.UsePrices(cfg.PriceTable())
		if sv.tracer, err = telemetry.Open(cfg, log); err != nil {
			log.Warn("telemetry off", "err", err)
		}
	}
	return sv
}

// becomeSubreaper makes orphaned descendants re-parent to this process, so
// the supervisor can find and reap them.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// run claims the session and runs turns until none is left. Each step from
// one turn to the next (or to the end) is a single update of the record, so
// nobody ever sees the session settled while a follow-up is about to start.
func (sv *supervisor) run(ctx context.Context) error {
	s, next, err := sv.begin(ctx)
	for err == nil && next != nil {
		first := next.N
		end, clocks := sv.runTurn(ctx, s, next)
		signalled := awaitJobSignal(ctx, end)
		if sv.leftToScheduler() {
			// The scheduler signalled the job: whether it cancelled or
			// requeued it is its to say (the runner's judgement, or this
			// job's next run), not this process's. Asked only after the
			// wait above: the agent, signalled with the supervisor, may
			// have ended before the supervisor's own signal was seen.
			sv.log.Info("left to the scheduler", "turn", next.N)
			return nil
		}
		if signalled {
			end.Killed = true // by the job's cancellation, recorded as such
		}
		if s.Workspace != nil {
			end.Work = sv.commitTurn(s, end.N)
		}
		s, next, err = sv.afterTurn(ctx, end)
		sv.traceTurns(s, clocks, first, end.N)
	}
	if err != nil {
		return fmt.Errorf("supervise %s: %w", sv.id, err)
	}
	return nil
}

// begin claims the session and starts its first turn of this supervisor:
// the task, or the follow-up that reopened it. A session whose worktree
// is not made yet (or was removed) has it made first, between the claim
// and the turn; meanwhile it is pending, and a kill stops the making.
func (sv *supervisor) begin(ctx context.Context) (*record.Session, *record.Turn, error) {
	if reason := sv.jobSetupFailed(); reason != "" {
		s, err := sv.turns.ClaimFailed(ctx, reason)
		return s, nil, err
	}
	s, turn, prepare, err := sv.turns.Claim(ctx)
	if err != nil {
		return s, turn, err
	}
	// Only now, with the session its own: a supervisor that cannot claim
	// it (another one runs its turn) must not make, nor on its way out
	// sweep, the cgroup that the running turn's processes are in.
	if sv.contained {
		sv.cg = sv.openCgroup()
		sv.log.Info("session claimed", "containment", sv.containment())
	}
	if !prepare {
		return s, turn, err
	}
	made, perr := sv.prepare(ctx, s.Workspace)
	if se := (*setupError)(nil); errors.As(perr, &se) {
		// The scheduler signals the setup command with the supervisor,
		// as it does the agent: its end may be seen first.
		awaitJobSignalAfter(ctx, se.code)
	}
	if perr != nil {
		// What the making started and left (a git or a setup command
		// cut short) is stopped before the failure is recorded.
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := sv.sweep(sctx); err != nil {
			sv.log.Error("sweep after making the worktree", "err", err)
		}
		cancel()
	}
	if perr != nil && sv.leftToScheduler() {
		// The scheduler signalled the job while the worktree was being
		// made (a requeue, a preemption, a cancel): as for a turn, its
		// fate is the scheduler's. A requeued job's next run claims the
		// session, still pending, and makes the worktree again; a
		// cancelled one the runner judges.
		sv.log.Info("left to the scheduler while making the worktree", "err", perr)
		return s, nil, nil
	}
	return sv.turns.Prepared(ctx, made, perr)
}

// slurmJob is the Slurm job this supervisor runs as, as its record names
// it: a job array's task is ARRAY_TASK, not its own job number.
func slurmJob() string {
	if array, task := os.Getenv("SLURM_ARRAY_JOB_ID"), os.Getenv("SLURM_ARRAY_TASK_ID"); array != "" && task != "" {
		return array + "_" + task
	}
	return os.Getenv("SLURM_JOB_ID")
}

// leftToScheduler says a signal handed the job's outcome to its
// scheduler (stopOnSignal).
func (sv *supervisor) leftToScheduler() bool { return sv.left != nil && sv.left.Load() }

// jobSignalWait is how long a supervisor in a cluster job waits, once its
// agent has died of SIGTERM or SIGINT, for the same signal to reach it.
const jobSignalWait = 2 * time.Second

// awaitJobSignal gives the supervisor's own signal the time to be recorded
// when its agent died of one in a cluster job: the scheduler signals every
// process of a cancelled job at once, and which of the two is seen first
// is chance. Recorded first, the turn would read as the agent failing
// ("exited with code 143") rather than the job cancelled. ctx ends when
// the supervisor's signal has been recorded (stopOnSignal); it reports
// whether it did.
func awaitJobSignal(ctx context.Context, end state.TurnEnd) bool {
	if end.Killed || end.ExitCode == nil {
		return false
	}
	return awaitJobSignalAfter(ctx, *end.ExitCode)
}

// awaitJobSignalAfter is awaitJobSignal for a process of the job that
// ended with code: the agent, or the worktree's setup command, which a
// requeue's SIGTERM ends as it ends the supervisor.
func awaitJobSignalAfter(ctx context.Context, code int) bool {
	if os.Getenv("SLURM_JOB_ID") == "" || code != 128+int(syscall.SIGTERM) && code != 128+int(syscall.SIGINT) {
		return false
	}
	t := time.NewTimer(jobSignalWait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return true
	case <-t.C:
		return false
	}
}

// afterTurn records how a turn ended and, in the same update, starts the
// next queued follow-up or settles the session.
func (sv *supervisor) afterTurn(ctx context.Context, end state.TurnEnd) (*record.Session, *record.Turn, error) {
	s, turn, err := sv.turns.EndTurn(ctx, end)
	if err != nil {
		return nil, nil, fmt.Errorf("record turn %d: %w", end.N, err)
	}
	code := "none"
	if end.ExitCode != nil {
		code = fmt.Sprint(*end.ExitCode)
	}
	sv.log.Info("turn ended", "turn", end.N, "exit", code, "killed", end.Killed, "reason", end.Reason)
	return s, turn, nil
}

// dirCheckEvery is how often the supervisor checks that its session is
// still recorded: well within a second of the removal of its directory or
// its record, the agent is stopped.
const dirCheckEvery = 200 * time.Millisecond

// watchDir stops the session (through stop, as SIGTERM does) once its
// directory is gone or replaced, or its record is removed from it: nothing
// could record what the agent does any more, and no listing would show it
// nor kill find it. It returns when ctx ends.
func (sv *supervisor) watchDir(ctx context.Context, stop context.CancelFunc) {
	dir := sv.turns.Files.Dir()
	first, err := os.Lstat(dir)
	if err != nil {
		sv.log.Warn("cannot watch the session's directory", "err", err)
		return
	}
	t := time.NewTicker(dirCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now, err := os.Lstat(dir)
		if err == nil && os.SameFile(first, now) {
			if sv.turns.Files.RecordMissing() {
				sv.log.Error("the session's record (meta.json) was removed while it ran; stopping its agent", "dir", dir)
				stop()
				return
			}
			continue
		}
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			sv.log.Error("the session's directory was removed while it ran; stopping its agent", "dir", dir)
			stop()
			return
		}
	}
}

// stopOnSignal stops the session when a signal asks, as a kill does:
// SIGTERM or SIGINT (zwarm kill sends SIGTERM after recording why; anyone
// else's, a cluster's scheduler cancelling the job, is recorded as such),
// or SIGUSR1, which a cluster's scheduler sends shortly before the job's
// time limit (sbatch --signal=B:USR1@60) and whose default action would
// end the supervisor without a word. The reason is recorded before the
// agent is stopped, and a kill's own reason, recorded first, is kept. A
// session that runs as a job of its runner, signalled by nobody who
// recorded why (schedulers: Slurm's SIGTERM, a cancel and a requeue
// alike), is left to the scheduler's judgement: the agent stops, nothing
// is recorded, and left says so. In a Slurm job it also asks whether the
// warning came before it listened (missedWarning). The returned func
// stops listening and waits for the listener and the question.
func stopOnSignal(ctx context.Context, turns *state.Turns, log *slog.Logger, schedulers func() bool, left *atomic.Bool) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1)
	// Listening now, it asks whether Slurm's one warning came before.
	warned := make(chan os.Signal, 1)
	checked := make(chan struct{})
	if job := os.Getenv("SLURM_JOB_ID"); job != "" {
		go func() {
			defer close(checked)
			if missedWarning(ctx, job) {
				log.Info("the job is within a minute of its time limit: Slurm's warning came before the supervisor listened")
				warned <- syscall.SIGUSR1
			}
		}()
	} else {
		close(checked)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var sig os.Signal
		select {
		case sig = <-sigs:
		case sig = <-warned:
		case <-ctx.Done():
			return
		}
		job := slurmJob()
		if sig != syscall.SIGUSR1 && job != "" && schedulers() {
			// Slurm's SIGTERM, not zwarm kill's (which records the kill
			// first): a cancel and a requeue (a preemption) look alike
			// from here. The agent is stopped and nothing recorded:
			// the runner judges a cancelled job, and a requeued job's
			// next run takes the session over and continues.
			log.Info("stopping; the job's fate is the scheduler's", "signal", sig)
			left.Store(true)
			cancel()
			return
		}
		reason := signalReason(sig.(syscall.Signal), job)
		if err := turns.RequestStop(reason); err != nil {
			log.Warn("record the stop", "reason", reason, "err", err)
		}
		log.Info("stopping", "signal", sig, "reason", reason)
		cancel()
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel()
		<-done
		<-checked
	}
}

// signalReason is why a session stopped on a signal nobody recorded a
// reason for, in a Slurm job (job) or not.
func signalReason(sig syscall.Signal, job string) string {
	switch {
	case sig == syscall.SIGUSR1 && job != "":
		return "stopped ahead of the time limit of its slurm job " + job + ", at Slurm's warning a minute before it"
	case job != "":
		return "cancelled by slurm (job " + job + ")"
	}
	return "stopped by " + unix.SignalName(sig)
}

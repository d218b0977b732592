package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zwarm/zwarm/sessions/config"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/store"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// ErrNotRunning is returned (wrapped) by Kill for a settled session.
var ErrNotRunning = errors.New("not running")

// ErrRunning is returned (wrapped) by Remove for a session that still runs.
var ErrRunning = errors.New("still running")

// handoverTimeout bounds how long Kill waits for a command that is starting
// a supervisor (spawn, inject) to hand the session over.
const handoverTimeout = 10 * time.Second

// Kill stops a session. It first marks the kill in the record, under the
// session's lock, so that from then on no turn starts and no follow-up is
// handed over (or sent, until the kill is done); then its supervisor gives
// the agent SIGTERM, the grace period and SIGKILL, kills every remaining
// process of the session and records "killed". If the supervisor is gone
// or does not answer, Kill does that itself. When Kill returns without
// error, no process started for the session is alive and none will be
// started. A settled session is not running, but processes it started may
// be (left by a supervisor that could not stop them): they are stopped
// too, and only a settled session with nothing alive is ErrNotRunning.
func (m *Manager) Kill(ctx context.Context, idOrPrefix string) (*record.Session, error) {
	return m.KillBecause(ctx, idOrPrefix, "")
}

// KillBecause is Kill with the reason recorded as the session's error
// ("killed by zwarm kill" when empty): an orchestrator ending a worker, a
// watcher stopping one past its budget.
func (m *Manager) KillBecause(ctx context.Context, idOrPrefix, reason string) (*record.Session, error) {
	k, err := m.KillReport(ctx, idOrPrefix, reason)
	return k.Session, err
}

// Killed is what a kill did (KillReport): the session, and the follow-ups
// queued when the kill was marked, which it dropped (none is queued after).
type Killed struct {
	Session *record.Session
	Dropped []record.InboxEntry
}

// KillReport is KillBecause, saying which follow-ups it dropped; never nil.
func (m *Manager) KillReport(ctx context.Context, idOrPrefix, reason string) (*Killed, error) {
	var queued map[string]bool
	s, err := m.kill(ctx, idOrPrefix, reason, &queued)
	k := &Killed{Session: s}
	if s != nil && len(queued) > 0 {
		k.Dropped = m.st.Undelivered(s.ID, queued)
	}
	return k, err
}

func (m *Manager) kill(ctx context.Context, idOrPrefix, reason string, queued *map[string]bool) (*record.Session, error) {
	if reason == "" {
		reason = "killed by zwarm kill"
	}
	id, err := listing.Resolve(m.st, idOrPrefix)
	if err != nil {
		return nil, err
	}
	loaded, err := m.st.Load(id)
	if err == nil && loaded.Legacy {
		return nil, fmt.Errorf("kill %s: written by the Python zwarm, which this zwarm does not supervise", record.ShortID(id))
	} else if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, m.killUnreadable(ctx, id, err)
	}
	grace := config.DefaultKillGrace
	if cfg, err := m.Config(); err != nil {
		m.warn(fmt.Errorf("%w; killing with the default grace period of %s", err, grace))
	} else {
		grace = cfg.Grace()
	}
	if err == nil && state.Remote(loaded) {
		return m.killRemote(ctx, id, reason, grace, queued)
	}
	self, err := proc.RefOf(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("kill %s: %w", record.ShortID(id), err)
	}
	ctx = m.writing(ctx)
	k := &killing{m: m, id: id, reason: reason, self: self, grace: grace, interrupted: ctx, queued: queued}
	s, forced, err := m.lockedForKill(ctx, id, func(tx *state.Tx) error { return k.mark(ctx, tx) })
	if forced != nil {
		// Its supervisor is dead already: the kill goes through with what
		// is left to do (each step bounded), whatever Ctrl+C says, and
		// then says what it did.
		ctx = context.WithoutCancel(ctx)
		if errors.Is(err, state.ErrLockTimeout) {
			return nil, m.killForcedUnrecorded(ctx, id, forced)
		}
	}
	if err != nil && store.IsReadOnly(err) {
		if k.strays == nil {
			return m.killUnrecorded(ctx, id, grace, err)
		}
		// A settled session's leftovers were swept: it had nothing to record.
		if s, err = m.st.Load(id); err != nil {
			return nil, fmt.Errorf("kill %s: %w", record.ShortID(id), err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("kill %s: %w", record.ShortID(id), err)
	}
	if s.Settled() {
		return k.settled(s)
	}
	return k.finish(ctx, forced)
}

// killing is one kill of a local session, from the update that marks it
// stopping to the record of its end.
type killing struct {
	m           *Manager
	id, reason  string
	self        *proc.Ref
	grace       time.Duration
	interrupted context.Context // the caller's: Ctrl+C
	// owner is who ran the session when it was marked; answers says it
	// stops its agent on SIGTERM.
	owner   *proc.Ref
	answers bool
	// strays are what a settled session left running, swept under the
	// lock (nil: none were looked for); sweepErr says why some are left.
	strays   []proc.Stat
	sweepErr error
	// queued gets the follow-ups queued when the kill is marked.
	queued *map[string]bool
}

// mark is the kill's update of the record, under its lock: a running
// session is marked stopping by this process; a settled one has its
// strays (a supervisor that died before it swept, say) swept here, so
// that no follow-up can start a new turn, whose processes the sweep would
// take for strays, until it is done.
func (k *killing) mark(ctx context.Context, tx *state.Tx) error {
	s := tx.Session()
	if s.Settled() {
		// Processes only exiting (a cgroup still populated) are none.
		if c := k.m.containment(k.id); c.Alive() {
			if procs, err := c.Procs(), k.m.sweepOut(ctx, k.id); len(procs) > 0 || err != nil {
				k.strays, k.sweepErr = append([]proc.Stat{}, procs...), err
			}
		}
		return nil
	}
	if s.Status() == record.StatusAttached {
		return attachedError(s)
	}
	if err := tx.RequestStop(k.reason, time.Now().UTC()); err != nil {
		return err
	}
	s.Killer = k.self
	k.owner, k.answers = record.ClonePtr(s.Owner), state.OwnerAnswersSignals(s)
	*k.queued = k.m.st.QueuedIDs(k.id)
	return nil
}

// settled is the answer of a kill of a settled session: there was nothing
// to stop, or only the strays it swept.
func (k *killing) settled(s *record.Session) (*record.Session, error) {
	if k.strays == nil {
		return s, fmt.Errorf("kill %s: %w: it %s", record.ShortID(k.id), ErrNotRunning, s.Status().Ended())
	}
	if k.sweepErr != nil {
		return s, fmt.Errorf("kill %s: %w", record.ShortID(k.id), k.sweepErr)
	}
	k.m.warn(fmt.Errorf("session %s had %s, but processes it started were still running: stopped them%s",
		record.ShortID(k.id), s.Status(), proc.PIDList(k.strays)))
	return s, nil
}

// finish stops the marked session's owner (gracefully, then by force),
// sweeps what is left, and records the kill; a kill that could not be
// recorded lets go of its mark.
func (k *killing) finish(ctx context.Context, forced *forcedStop) (*record.Session, error) {
	m, id := k.m, k.id
	recorded := false
	defer func() {
		if !recorded {
			m.releaseKill(ctx, id, k.self)
		}
	}()
	note, err := m.stopOwner(ctx, id, k.owner, k.answers, k.grace)
	if err != nil {
		return nil, fmt.Errorf("kill %s: %w", record.ShortID(id), err)
	}
	if forced != nil {
		note = forced.note()
	}
	if err := m.sweepOut(ctx, id); err != nil {
		return nil, fmt.Errorf("kill %s: %w", record.ShortID(id), err)
	}
	if note == "" {
		note = "the supervisor was gone"
	}
	s, err := m.recordKilled(ctx, id, k.self, note)
	if err != nil {
		return nil, err
	}
	recorded = true
	if forced != nil && k.interrupted.Err() != nil {
		// Not context.Canceled: what it did is the message.
		return s, fmt.Errorf("kill %s: interrupted after %s; the kill went on and is recorded: the session is %s",
			record.ShortID(id), forced.did(), s.Status())
	}
	return s, nil
}

// killUnrecorded stops a session whose record cannot be written (a
// read-only state dir): signals need no writes. Its supervisor gets
// SIGTERM, so it stops its agent with the grace period, and SIGKILL if it
// has not exited after that; then everything left is swept. The error says
// what was stopped and that the record could not be updated.
func (m *Manager) killUnrecorded(ctx context.Context, id string, grace time.Duration, werr error) (*record.Session, error) {
	s, err := m.st.Load(id)
	c := m.containment(id)
	sups := proc.SupervisorsOf(id)
	if err == nil && s.Settled() && len(sups) == 0 && !c.Alive() {
		return s, fmt.Errorf("kill %s: %w: it %s", record.ShortID(id), ErrNotRunning, s.Status().Ended())
	}
	var refs []*proc.Ref
	for _, pid := range sups {
		if ref, err := proc.RefOf(pid); err == nil {
			refs = append(refs, ref)
			ref.Signal(unix.SIGTERM)
			ref.Signal(unix.SIGCONT)
		}
	}
	stopped := c.Procs()
	for _, ref := range refs {
		wctx, cancel := context.WithTimeout(ctx, grace+2*time.Second)
		if ref.WaitGone(wctx) != nil && ctx.Err() == nil {
			ref.Signal(unix.SIGKILL)
		}
		cancel()
		stopped = append(stopped, proc.Stat{PID: ref.PID})
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("kill %s: %w", record.ShortID(id), ctx.Err())
	}
	if err := m.sweepOut(ctx, id); err != nil {
		return nil, fmt.Errorf("kill %s: %w (and its record cannot be updated: %v)", record.ShortID(id), err, werr)
	}
	what := "nothing of it was running"
	if len(stopped) > 0 {
		what = "stopped its processes" + proc.PIDList(stopped)
	}
	return nil, fmt.Errorf("kill %s: %s, but its record could not be updated: %w", record.ShortID(id), what, werr)
}

// lockedForKill updates the record for a kill, waiting for the session's
// lock at most lock_timeout. A supervisor stopped (SIGSTOP) while it held
// the lock would hold it forever, so it is continued first. When the lock
// is still held after lock_timeout (a supervisor hung in the kernel, say,
// or another process), the session's live supervisors are killed: the
// session is being killed anyway, and a supervisor's lock goes with it.
// The lock is then tried once more, briefly. forced says what was
// killed; it is nil when nothing was (no live supervisor: the timeout is
// returned as it is, and nothing was changed).
func (m *Manager) lockedForKill(ctx context.Context, id string, fn func(*state.Tx) error) (*record.Session, *forcedStop, error) {
	if s, err := m.st.Load(id); err == nil && s.Owner != nil && s.Owner.Role == record.RoleSupervisor && proc.IsSupervisorOf(s.Owner.PID, id) {
		s.Owner.Signal(unix.SIGCONT)
	}
	for _, pid := range proc.SupervisorsOf(id) {
		unix.Kill(pid, unix.SIGCONT)
	}
	s, err := m.st.UpdateCtx(ctx, id, fn)
	var te *state.LockTimeoutError
	if !errors.As(err, &te) || ctx.Err() != nil {
		return s, nil, err
	}
	sups := m.st.LiveSupervisors(id)
	if len(sups) == 0 {
		return nil, nil, err
	}
	pids := make([]proc.Stat, len(sups))
	for i, ref := range sups {
		pids[i] = proc.Stat{PID: ref.PID}
	}
	m.warn(fmt.Errorf("session %s: its lock was held by %s for %s; stopping its supervisor%s by force",
		record.ShortID(id), te.Holder, te.After, proc.PIDList(pids)))
	forced := &forcedStop{lock: te}
	for _, ref := range sups {
		if ref.Signal(unix.SIGKILL) != nil {
			continue // gone meanwhile
		}
		forced.pids = append(forced.pids, proc.Stat{PID: ref.PID})
		// However Ctrl+C comes in: what was killed must be gone before
		// the kill says so.
		gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		ref.WaitGone(gctx)
		cancel()
	}
	if len(forced.pids) == 0 {
		return nil, nil, err
	}
	m.st.DropLocksOfGone(id)
	// No second lock_timeout: a killed holder lets go of the lock as it
	// finishes exiting (its other threads may outlive the main one by a
	// moment), which forcedLockGrace allows for; any other holder is not
	// waited for again.
	s, err = m.st.UpdateCtx(store.WithLockPolicy(context.WithoutCancel(ctx), store.LockPolicy{Timeout: forcedLockGrace}), id, fn)
	if errors.Is(err, state.ErrLockTimeout) {
		err = te // still held: the wait that counts is the first one
	}
	return s, forced, err
}

// releaseKill lets follow-ups go on once this command (self) has given
// up its kill, interrupted or failed: the record no longer names it as
// the killer they wait for.
func (m *Manager) releaseKill(ctx context.Context, id string, self *proc.Ref) {
	m.st.UpdateCtx(store.WithLockPolicy(context.WithoutCancel(ctx), store.LockPolicy{Timeout: store.LockPolicyOf(ctx).Timeout}), id, func(tx *state.Tx) error {
		s := tx.Session()
		if s.Killer != nil && *s.Killer == *self {
			s.Killer = nil
		}
		return nil
	})
}

// recordKilled records the kill that self carried out, unless the
// supervisor recorded it itself; note says what the kill had to do.
func (m *Manager) recordKilled(ctx context.Context, id string, self *proc.Ref, note string) (*record.Session, error) {
	s, err := m.st.ChangeCtx(ctx, id, func(tx *state.Tx) error {
		s := tx.Session()
		if s.Killer != nil && *s.Killer == *self {
			s.Killer = nil
		}
		if s.Settled() {
			return nil // the supervisor recorded it
		}
		if err := tx.Stopped(note, time.Now().UTC()); err != nil {
			return err
		}
		return m.st.DropQueued(s, "the session was killed before it was delivered")
	}, true)
	if err != nil {
		return nil, fmt.Errorf("kill %s: %w", record.ShortID(id), stoppedUnrecorded(err))
	}
	return s, nil
}

// stoppedUnrecorded is the error of a kill that stopped the session but
// could not record it: its lock, free when the kill began, was taken and
// held past lock_timeout meanwhile. The lock's error would say nothing
// was changed; it says what was done instead.
func stoppedUnrecorded(err error) error {
	var te *state.LockTimeoutError
	if !errors.As(err, &te) || te.Did != "" {
		return err
	}
	c := *te
	c.Did = "zwarm stopped the session and everything it ran, but could not record it: the next command that reads the session records it as killed"
	return &c
}

// forcedLockGrace is how long a kill that killed the session's
// supervisors waits for their lock to be let go.
const forcedLockGrace = time.Second

// forcedStop is what a kill did by force because the session's lock was
// still held after lock_timeout.
type forcedStop struct {
	lock *state.LockTimeoutError
	pids []proc.Stat // the supervisors killed
}

// did says what was done: "stopping its supervisor (pid 42) by force".
func (f *forcedStop) did() string {
	return fmt.Sprintf("stopping its supervisor%s by force", proc.PIDList(f.pids))
}

// note is for the record: why the supervisor was killed.
func (f *forcedStop) note() string {
	return fmt.Sprintf("its lock was held by %s for %s, so its supervisor%s was killed", f.lock.Holder, f.lock.After, proc.PIDList(f.pids))
}

// killForcedUnrecorded finishes a kill that stopped the session's
// supervisor by force but still cannot take its lock: what is left of the
// session is stopped (signals need no lock), and the error says what was
// done and that the kill is not recorded.
func (m *Manager) killForcedUnrecorded(ctx context.Context, id string, f *forcedStop) error {
	left := m.containment(id).Procs()
	what := "stopped its supervisor" + proc.PIDList(f.pids)
	if len(left) > 0 {
		what += " and its processes" + proc.PIDList(left)
	}
	if err := m.sweepOut(ctx, id); err != nil {
		what += fmt.Sprintf(" (some could not be stopped: %v)", err)
	}
	te := *f.lock
	te.Did = "zwarm " + what + " by force, but could not record the kill: the session will show as failed, its supervisor gone"
	return fmt.Errorf("kill %s: %w", record.ShortID(id), &te)
}

// stopOwner makes the session's owner stop and waits until it has. A
// supervisor that answers signals gets SIGTERM (and SIGCONT, should it be
// stopped) and records the kill itself. An owner that has not claimed the
// session yet (a command starting a supervisor, or the supervisor it
// handed over to, which may not have set up its signal handling: SIGTERM
// would kill it outright) is given time to: claiming it, the supervisor
// sees the kill and settles at once. It returns a note for the record when
// the owner had to be forced.
func (m *Manager) stopOwner(ctx context.Context, id string, owner *proc.Ref, answers bool, grace time.Duration) (string, error) {
	if owner == nil || !owner.Alive() || owner.Role == record.RoleSupervisor && !proc.IsSupervisorOf(owner.PID, id) {
		return "", nil
	}
	limit := grace + 10*time.Second
	if answers {
		if err := owner.Signal(unix.SIGTERM); err == nil {
			owner.Signal(unix.SIGCONT)
		}
	} else {
		limit = handoverTimeout + grace + 10*time.Second
	}
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	_, err := m.waitUntil(wctx, id, func(s *record.Session) (bool, error) {
		if s.Settled() {
			return true, nil
		}
		if s.Owner != nil && *s.Owner != *owner {
			// The spawning command handed over; the supervisor, claiming
			// the session, sees the kill. Should it not, it is the one
			// forced below.
			o := *s.Owner
			owner = &o
		}
		return false, nil
	})
	if err == nil {
		return "", nil
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	// It did not finish in time: take over.
	if owner.Role == record.RoleSupervisor && owner.Alive() {
		owner.Signal(unix.SIGKILL)
		gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		owner.WaitGone(gctx)
		cancel()
		m.st.DropLocksOfGone(id)
		return fmt.Sprintf("its supervisor (pid %d) did not stop within %s and was killed", owner.PID, limit), nil
	}
	return fmt.Sprintf("its owner (pid %d) did not hand over within %s", owner.PID, limit), nil
}

// sweepOut kills every process left of a session and removes its cgroup.
func (m *Manager) sweepOut(ctx context.Context, id string) error {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c := m.containment(id)
	if err := c.Sweep(sctx); err != nil {
		return err
	}
	if err := proc.RemoveCgroup(c.Cgroup); err == nil {
		m.st.ForgetCgroup(id)
	}
	return nil
}

// killUnreadable stops a session whose record cannot be read: its
// supervisor is found by its command line, its other processes by cgroup
// and marker. The record stays as it is; the error says so.
func (m *Manager) killUnreadable(ctx context.Context, id string, readErr error) error {
	var stopped []string
	for _, pid := range proc.SupervisorsOf(id) {
		ref, err := proc.RefOf(pid)
		if err != nil {
			continue
		}
		ref.Signal(unix.SIGKILL)
		stopped = append(stopped, strconv.Itoa(pid))
	}
	c := m.containment(id)
	for _, p := range c.Procs() {
		stopped = append(stopped, strconv.Itoa(p.PID))
	}
	if err := m.sweepOut(ctx, id); err != nil {
		return fmt.Errorf("kill %s: %w (and its record cannot be read: %v)", record.ShortID(id), err, readErr)
	}
	what := "nothing of it was running"
	if len(stopped) > 0 {
		what = "stopped its processes (pid " + strings.Join(stopped, " ") + ")"
	}
	var re *state.RecordError
	if errors.As(readErr, &re) {
		readErr = re.Err
	}
	return &state.RecordError{ID: id, Err: fmt.Errorf("%v; %s", readErr, what)}
}

// Remove deletes a settled session and everything it recorded. A running
// session is refused unless force is set, which kills it first; force also
// removes a session whose record cannot be read.
func (m *Manager) Remove(ctx context.Context, idOrPrefix string, force bool) (string, error) {
	return m.remove(ctx, idOrPrefix, force, false)
}

// CanRemove answers as Remove would, killing and deleting nothing (rm
// --dry-run): the id Remove would delete, or the error it would refuse with.
func (m *Manager) CanRemove(ctx context.Context, idOrPrefix string, force bool) (string, error) {
	return m.remove(ctx, idOrPrefix, force, true)
}

// refusal is an error that reads as its message alone and is its kind
// (errors.Is).
type refusal struct {
	msg  string
	kind error
}

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() error { return e.kind }

func (m *Manager) remove(ctx context.Context, idOrPrefix string, force, dry bool) (string, error) {
	if err := m.trusted(); err != nil { // it runs git, with the settings
		return "", err
	}
	id, err := listing.Resolve(m.st, idOrPrefix)
	if err != nil {
		return "", err
	}
	s, err := m.Get(ctx, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		if !force {
			hint := "; zwarm rm --force " + record.ShortID(id) + " removes it anyway"
			if strings.Contains(err.Error(), "rm --force") {
				hint = "" // the error says so already
			}
			return "", fmt.Errorf("rm %s: %w%s", record.ShortID(id), err, hint)
		} else if dry {
			return id, nil
		}
		var re *state.RecordError
		if kerr := m.killUnreadable(ctx, id, err); !errors.As(kerr, &re) {
			return "", kerr
		}
		return id, m.removeRecord(ctx, id)
	}
	if err != nil {
		return "", err
	}
	if s.Legacy {
		return "", fmt.Errorf("rm %s: written by the Python zwarm; this zwarm only reads it (delete %s by hand)", record.ShortID(id), m.st.SessionDir(id))
	}
	// A settled session whose processes still run is not forgotten: its
	// record is what finds them.
	c := m.containment(id)
	if s.Settled() && !force && c.Alive() {
		return "", fmt.Errorf("rm %s: %w: it %s, but processes it started are still running%s; stop them with zwarm kill %s first, or pass --force",
			record.ShortID(id), ErrRunning, s.Status().Ended(), proc.PIDList(c.Procs()), record.ShortID(id))
	}
	switch {
	case s.Status() == record.StatusAttached:
		// A person works in its CLI: kill refuses it, so neither can say
		// kill it first.
		return "", fmt.Errorf("rm %s: %w", record.ShortID(id), attachedError(s))
	case !force && !s.Settled():
		return "", &refusal{fmt.Sprintf("rm %s: it is %s; kill it first, or pass --force to kill and remove it", record.ShortID(id), s.Status()), ErrRunning}
	case dry && (force || s.Workspace == nil):
		return id, nil // nothing else is refused: what is left asks about work never landed
	case dry:
		u, err := m.unlanded(ctx, s)
		if u != nil {
			return "", fmt.Errorf("rm: %w", u)
		}
		return id, err
	case !s.Settled() || c.Alive():
		if _, err := m.Kill(ctx, id); err != nil && !errors.Is(err, ErrNotRunning) {
			return "", err
		}
		if s, err = m.Get(ctx, id); err != nil {
			return "", err
		}
	}
	if s.Workspace != nil {
		// Claimed: no landing, update or follow-up starts in it meanwhile.
		claimed, release, err := m.claimWorktree(ctx, id, "rm")
		if err != nil {
			return "", err
		}
		defer release()
		s = claimed
	}
	// The worktree and branch go first: a removal they refuse (work never
	// landed) or that fails leaves the session to say where they are.
	if err := m.dropWorkspace(ctx, s, force); err != nil {
		return "", fmt.Errorf("rm: %w", err)
	}
	return id, m.removeRecord(ctx, id)
}

// removeRecord deletes a session's directory for rm ("rm 1a2b: ...").
func (m *Manager) removeRecord(ctx context.Context, id string) error {
	if err := m.st.RemoveSettled(m.writing(ctx), id); err != nil {
		return fmt.Errorf("rm %s: %w", record.ShortID(id), err)
	}
	return nil
}

// cleanClaim reads a session with a worktree afresh for Clean and, unless
// it is a dry run, claims it; it fails for a session that runs again or
// that a landing or an update works in.
func (m *Manager) cleanClaim(ctx context.Context, id string, dryRun bool) (*record.Session, func(), error) {
	if !dryRun {
		return m.claimWorktree(ctx, id, "clean")
	}
	s, err := m.Get(ctx, id)
	if err == nil {
		err = claimable(s)
	}
	if err != nil {
		return nil, nil, err
	}
	return s, func() {}, nil
}

// CleanOptions choose what Clean removes.
type CleanOptions struct {
	// OlderThan: sessions that settled longer ago than this.
	OlderThan time.Duration
	DryRun    bool
	// Force removes sessions whose worktrees hold work never landed too.
	Force bool
}

// CleanResult is what Clean removed (or would), and what it kept.
type CleanResult struct {
	Removed []string
	// Kept are sessions left alone because removing them would drop work
	// never landed.
	Kept []*UnlandedError
}

// Clean removes settled sessions that ended before the cutoff, with their
// worktrees; one whose worktree holds work never landed is kept (and
// reported) unless opt.Force. With opt.DryRun it only lists them.
func (m *Manager) Clean(ctx context.Context, opt CleanOptions) (*CleanResult, error) {
	if err := m.trusted(); err != nil { // it runs git, with the settings
		return nil, err
	}
	all, err := m.List(ctx, listing.Options{})
	var le *listing.Error
	if err != nil && !errors.As(err, &le) {
		return nil, err
	}
	cutoff := time.Now().Add(-opt.OlderThan)
	res := &CleanResult{}
	for _, s := range all {
		if s.Legacy || !s.Settled() {
			continue
		}
		end := s.UpdatedAt
		if s.EndedAt != nil {
			end = *s.EndedAt
		}
		if end.After(cutoff) {
			continue
		}
		removed, kept, err := m.cleanOne(ctx, s, opt)
		if err != nil {
			return res, err
		}
		if kept != nil {
			res.Kept = append(res.Kept, kept)
		}
		if removed {
			res.Removed = append(res.Removed, s.ID)
		}
	}
	return res, nil
}

// cleanOne removes (or, in a dry run, would remove) one settled session
// that Clean chose, unless its worktree holds work never landed.
func (m *Manager) cleanOne(ctx context.Context, s *record.Session, opt CleanOptions) (removed bool, kept *UnlandedError, err error) {
	if m.containment(s.ID).Alive() {
		return false, nil, nil // processes it started still run: its record is what finds them
	}
	if s.Workspace != nil {
		// The listing's cache keeps no lander (a claim does not invalidate
		// it): the record itself says, and a removal claims it.
		fresh, release, err := m.cleanClaim(ctx, s.ID, opt.DryRun)
		if err != nil { // removed, reopened, busy or unreadable meanwhile: not clean's to judge
			return false, nil, state.RefusedWrite(err)
		}
		defer release()
		s = fresh
	} else if _, err := m.st.Load(s.ID); err != nil {
		// The listing saw a whole record; one broken, removed or unreadable
		// since is not clean's to judge: its directory is what is left of it.
		return false, nil, nil
	}
	if !opt.Force {
		u, err := m.unlanded(ctx, s)
		if errors.Is(err, workspace.ErrNotMade) { // not clean's to judge either
			m.warn(fmt.Errorf("clean: %w", err))
			return false, nil, nil
		} else if err != nil || u != nil {
			return false, u, err
		}
	}
	if !opt.DryRun {
		if err := m.dropWorkspace(ctx, s, true); err != nil {
			return false, nil, err
		}
		if err := m.st.RemoveSettled(m.writing(ctx), s.ID); errors.Is(err, state.ErrStartedAgain) {
			return false, nil, nil // a follow-up's: no longer done with
		} else if err != nil {
			return false, nil, fmt.Errorf("clean %s: %w", record.ShortID(s.ID), err)
		}
	}
	return true, nil, nil
}

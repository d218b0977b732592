package state

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/store"
	"github.com/zwarm/zwarm/sessions/workspace"
)

// This file is the session lifecycle: the only place a session's status,
// owner and turns change state. Every writer (spawn, the supervisor,
// inject, kill, a reader that finds a dead owner) applies one of these
// transitions to the record it holds under the session's lock, so a reader
// only ever sees the states in the table, never a step in between:
//
//	transition  from                                to
//	create      -                                   pending, owner = the spawning command
//	claim       pending                             pending, owner = its supervisor (making its
//	                                                worktree first, if it needs one)
//	prepared    pending, worktree being made        pending, worktree ready
//	startTurn   pending, or running between turns   running, a new turn running
//	handOver    running, its turn running           running, that turn ended, the next running (live agents)
//	endTurn     running, its turn running           running, between turns (always followed by
//	                                                startTurn or settle in the same update)
//	settle      pending or running, no turn running completed | failed | killed (the last turn's), no owner
//	reopen      settled                             pending, owner = the command sending a follow-up
//	requestStop not settled                         the same, with Stop set: nothing new may start
//	stopped     not settled                         killed, settled
//	abandon     not settled                         failed, settled (its owner died without a word)
//	failStart   pending                             failed, settled (the agent could not be started,
//	                                                or its worktree could not be made)
//	interrupt   running, its turn running           the same, with Interrupt set: the turn is to be
//	                                                stopped, and endTurn records it interrupted
//	attach      settled                             attached, owner = the attaching command
//	handToAttacher                                  attached, owner = the attaching command the
//	            running, between turns, the turn    interrupt names, in the update that ended the
//	            interrupted for a person            turn (no follow-up starts first)
//	detach      attached                            settled again, as it was before the attach
//
// Settled is the one answer to "is it done?": wait, ls, the dashboard,
// inject and kill all ask it. An attached session is not settled: a
// person works in its thread, so a follow-up queues and kill refuses it;
// it settles again when they leave the CLI, or when a reader finds the
// attaching command gone (detach, with a note saying so).

// KillFinishing reports whether the command that killed the session is
// still finishing the kill (Killer). A kill has nothing left to do but
// sweep and record once the session settled, so a stamp older than a
// minute past the end is stale (a long-lived process whose kill could not
// clear it) and holds nothing up.
func KillFinishing(s *record.Session, now time.Time) bool {
	if !s.Killer.Alive() {
		return false
	}
	return s.Stop != nil || s.EndedAt == nil || now.Sub(*s.EndedAt) < time.Minute
}

// TransitionError is a lifecycle step asked of a session in a state that
// does not allow it: a bug in the caller, or a record changed by hand.
type TransitionError struct {
	ID, Transition string
	From           record.Status
	Why            string
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("session %s: cannot %s a %s session: %s", store.ShortID(e.ID), e.Transition, e.From, e.Why)
}

func refuse(s *record.Session, transition, why string) error {
	return &TransitionError{ID: s.ID, Transition: transition, From: s.Status(), Why: why}
}

// claim makes the supervisor the owner of a pending session. With
// prepare, it is about to make the session's worktree before the first
// turn; it handles signals from now on, so a kill may signal it.
func claim(s *record.Session, sv proc.Ref, prepare bool) error {
	if s.Status() != record.StatusPending {
		return refuse(s, "claim", "only a pending session waits for its supervisor")
	}
	if prepare && s.Workspace == nil {
		return refuse(s, "claim", "it has no worktree to make")
	}
	s.Owner = &sv
	if prepare {
		s.Workspace.State, s.Workspace.Error = record.WorkspacePreparing, ""
	}
	return nil
}

// prepared records the session's worktree as made, at commit head, with
// what was brought into it. A worktree made again after its work was
// landed and removed starts a new change from head; the landing goes to
// the earlier ones.
func prepared(s *record.Session, m Made) error {
	ws := s.Workspace
	if ws == nil || ws.State != record.WorkspacePreparing {
		return refuse(s, "record the worktree of", "it is not making one")
	}
	if ws.Landed != nil && ws.Landed.Head != m.Head {
		ws.RetireLanding()
		ws.BaseCommit, ws.Changes, ws.Conflict = m.Head, &workspace.Stat{}, nil
	}
	ws.State, ws.Head, ws.Error = record.WorkspaceReady, m.Head, ""
	noteMade(ws, m)
	return nil
}

// noteMade records what making the worktree made, whether or not it went
// on to succeed: its git dir, and what was brought along (never to be
// committed, even if the making fails after bringing it).
func noteMade(ws *record.Workspace, m Made) {
	if m.Admin != "" {
		ws.AdminDir = m.Admin
	}
	if m.Own != "" {
		ws.OwnGitDir = m.Own
	}
	for _, b := range m.Brought {
		if !slices.Contains(ws.Brought, b) {
			ws.Brought = append(ws.Brought, b)
		}
	}
}

// prepareFailed records that the session's worktree could not be made:
// the session fails with the reason (or is killed, if a kill stopped it).
func prepareFailed(s *record.Session, m Made, reason string, now time.Time) error {
	if s.Workspace == nil || s.Workspace.State != record.WorkspacePreparing {
		return refuse(s, "record the failed worktree of", "it is not making one")
	}
	ws := s.Workspace
	ws.State, ws.Error = record.WorkspaceFailed, reason
	if s.Stop != nil {
		// A kill cut the making short (its git cancelled): nothing failed.
		ws.Error = record.NeverMade
	}
	noteMade(ws, m)
	return failStart(s, reason, now)
}

// OwnerAnswersSignals says the session's owner is a supervisor that has
// claimed it: it set up its handling of SIGTERM before claiming, so a kill
// may signal it. A pending session's owner has not claimed it yet (it may
// be a process a few instructions old, which SIGTERM would simply end): it
// sees a recorded kill when it claims the session.
func OwnerAnswersSignals(s *record.Session) bool {
	claimed := s.Status() != record.StatusPending || s.Workspace != nil && s.Workspace.State == record.WorkspacePreparing
	return s.Owner != nil && s.Owner.Role == record.RoleSupervisor && claimed && !s.Settled()
}

// turnStart is what starts a turn.
type turnStart struct {
	Prompt  string
	InboxID string
	Resumed bool // continues the agent's thread natively
	Live    bool // delivered to the agent process of the previous turn
}

// startTurn begins the next turn: the task, or a follow-up.
func startTurn(s *record.Session, ts turnStart, now time.Time) error {
	switch {
	case s.Stop != nil:
		return refuse(s, "start a turn of", "a kill is in progress")
	case s.TurnRunning():
		return refuse(s, "start a turn of", fmt.Sprintf("turn %d is still running", s.Turn))
	case s.Status() != record.StatusPending && s.Status() != record.StatusRunning:
		return refuse(s, "start a turn of", "reopen it first")
	}
	s.Turns = append(s.Turns, statusfield.With(record.Turn{N: len(s.Turns) + 1, Prompt: ts.Prompt, InboxID: ts.InboxID,
		StartedAt: now, Resumed: ts.Resumed, Live: ts.Live}, record.StatusRunning))
	statusfield.Set(s, record.StatusRunning)
	s.EndedAt, s.ExitCode, s.Error = nil, nil, ""
	s.Turn = len(s.Turns)
	return nil
}

// endTurn records how the running turn ended. The session stays running,
// between turns: the same update either starts the next turn or settles.
func endTurn(s *record.Session, e TurnEnd, now time.Time) error {
	if !s.TurnRunning() {
		return refuse(s, "end a turn of", "no turn is running")
	}
	t := s.Current()
	t.EndedAt, t.ExitCode = &now, e.ExitCode
	t.Notes = append(t.Notes, e.Notes...)
	switch {
	case e.Interrupted && s.Stop == nil && s.Interrupt != nil && s.Interrupt.Turn == t.N:
		// Not failed: stopped so that the thread goes on at once.
		statusfield.Set(t, record.StatusInterrupted)
		t.Error = ""
		note := "interrupted: a follow-up took over the thread"
		switch r := s.Interrupt; {
		case r.Attacher != nil:
			note = "interrupted: a person took over the thread (zwarm attach)"
		case r.InboxID == "":
			note = "interrupted for zwarm attach, which gave up before the thread was handed over"
		}
		t.Notes = append(t.Notes, note)
	case e.Killed:
		statusfield.Set(t, record.StatusKilled)
		t.Error = FirstNonBlank(stopReason(s), "killed by zwarm kill")
	case e.Reason != "":
		statusfield.Set(t, record.StatusFailed)
		t.Error = e.Reason
	case t.AgentFailed || e.ExitCode == nil || *e.ExitCode != 0:
		statusfield.Set(t, record.StatusFailed)
		if t.Error == "" {
			code := "no exit code"
			if e.ExitCode != nil {
				code = fmt.Sprintf("exited with code %d", *e.ExitCode)
			}
			t.Error = FirstNonBlank(t.AgentError, e.StderrTail, fmt.Sprintf("%s %s", e.Adapter, code))
		}
	default:
		statusfield.Set(t, record.StatusCompleted)
	}
	s.ExitCode, s.Agent, s.AgentLive = e.ExitCode, nil, false
	return nil
}

// handOver ends the running turn of a live agent, which just completed it,
// and starts the follow-up it is about to be given as the next turn.
func handOver(s *record.Session, ts turnStart, now time.Time) error {
	if !s.TurnRunning() {
		return refuse(s, "hand over", "no turn is running")
	}
	if s.Stop != nil {
		return refuse(s, "hand over", "a kill is in progress")
	}
	if s.Interrupt != nil && s.Interrupt.Attacher != nil {
		return refuse(s, "hand over", "a person is about to take over the thread")
	}
	t := s.Current()
	statusfield.Set(t, record.StatusCompleted)
	t.EndedAt = &now
	if t.AgentFailed {
		statusfield.Set(t, record.StatusFailed)
		t.Error = FirstNonBlank(t.Error, t.AgentError, "the agent reported failure")
	}
	s.Turns = append(s.Turns, statusfield.With(record.Turn{N: len(s.Turns) + 1, Prompt: ts.Prompt, InboxID: ts.InboxID,
		StartedAt: now, Resumed: true, Live: true}, record.StatusRunning))
	s.Turn = len(s.Turns)
	// An interrupt of the turn that just completed is moot: its follow-up,
	// delivered first, is the turn that starts now.
	s.Interrupt = nil
	return nil
}

// settle ends the session's activity: its status becomes its last turn's,
// and nobody owns it any more.
func settle(s *record.Session, now time.Time) error {
	if s.TurnRunning() {
		return refuse(s, "settle", fmt.Sprintf("turn %d is still running", s.Turn))
	}
	if s.Settled() {
		return refuse(s, "settle", "it is already settled")
	}
	if s.Status() == record.StatusAttached {
		return refuse(s, "settle", "a person works in its CLI: detach it")
	}
	switch last := s.Current(); {
	case s.Stop != nil:
		statusfield.Set(s, record.StatusKilled)
		if last == nil || last.Status() != record.StatusKilled {
			s.Error = stopReason(s)
		} else {
			s.Error = last.Error
		}
	case last == nil:
		statusfield.Set(s, record.StatusFailed)
		s.Error = FirstNonBlank(s.Error, "no turn ran")
	case last.Status() == record.StatusInterrupted:
		// Nothing took over the thread (an attach --interrupt given up):
		// zwarm stopped the turn, so the session was killed.
		statusfield.Set(s, record.StatusKilled)
		s.Error = "its turn was interrupted and nothing took over the thread"
	default:
		statusfield.Set(s, last.Status())
		s.Error = last.Error
	}
	if ws := s.Workspace; ws != nil && ws.Preparing() {
		// Nothing will make it now: a settled session is not "being made".
		ws.State, ws.Error = record.WorkspaceFailed, record.NeverMade
	}
	s.Owner, s.Agent, s.AgentLive, s.Stop, s.PendingInjects, s.Interrupt = nil, nil, false, nil, 0, nil
	s.EndedAt = &now
	return nil
}

// reopen makes a settled session pending again for a follow-up; owner is
// the command that will start its new supervisor.
func reopen(s *record.Session, owner proc.Ref) error {
	if !s.Settled() {
		return refuse(s, "reopen", "it is not settled")
	}
	statusfield.Set(s, record.StatusPending)
	s.Owner, s.EndedAt, s.Error, s.Killer = &owner, nil, "", nil
	unclaimWorkspace(s)
	return nil
}

// RequeuedPrompt continues a thread whose turn the cluster cut short by
// requeueing its job.
const RequeuedPrompt = "Your previous run was interrupted: the cluster requeued its job (it was preempted, or its node was lost), " +
	"and this is the next run of it. Continue the task where you left off: check what is already done first."

// requeued takes over a session whose job the cluster requeued: the turn
// the job's previous run left running ends interrupted, and the next one
// continues the thread (the agent's own resume) in this run, owned by
// sv; a session whose agent never began a thread starts its task again.
func requeued(s *record.Session, sv proc.Ref, now time.Time, startNext bool) error {
	if s.Settled() || !s.TurnRunning() {
		return refuse(s, "resume after its job was requeued", "no turn of it was running")
	}
	t := s.Current()
	statusfield.Set(t, record.StatusInterrupted)
	// It ended when its job was stopped, which nothing recorded (the
	// scheduler's SIGTERM is its to judge): at its last event, the last
	// it was seen at work, not now, after the time the job waited in the
	// queue.
	end := t.StartedAt
	if s.LastEventAt != nil && s.LastEventAt.After(end) && s.LastEventAt.Before(now) {
		end = *s.LastEventAt
	}
	t.EndedAt = &end
	t.Notes = append(t.Notes, fmt.Sprintf("interrupted: the cluster requeued its job; the next turn continues in the job's next run, which began %s later",
		now.Sub(end).Round(time.Second)))
	s.Owner, s.Agent, s.AgentLive = &sv, nil, false
	if !startNext {
		return nil // an interrupt asked meanwhile says what runs next
	}
	s.Interrupt = nil
	ts := turnStart{Prompt: s.Task}
	if s.ThreadID != "" {
		ts = turnStart{Prompt: RequeuedPrompt, Resumed: true}
	}
	return startTurn(s, ts, now)
}

// unclaimWorkspace forgets that a supervisor was making the worktree:
// until the next one claims the session, nobody is.
func unclaimWorkspace(s *record.Session) {
	if ws := s.Workspace; ws != nil && ws.State == record.WorkspacePreparing {
		ws.State = record.WorkspaceNew
	}
}

// requestStop marks a kill in progress: from now on no turn starts and no
// follow-up is handed over, whoever owns the session.
func requestStop(s *record.Session, reason string, now time.Time) error {
	if s.Settled() {
		return refuse(s, "stop", "it is not running")
	}
	if s.Status() == record.StatusAttached {
		return refuse(s, "stop", "a person works in its CLI; it settles when they leave it")
	}
	if s.Stop == nil {
		s.Stop = &record.StopRequest{At: now, Reason: reason}
	}
	return nil
}

func stopReason(s *record.Session) string {
	if s.Stop != nil && s.Stop.Reason != "" {
		return s.Stop.Reason
	}
	return "killed by zwarm kill"
}

// stopped records a kill that nobody else recorded: the owner was gone or
// could not be reached. note says so.
func stopped(s *record.Session, note string, now time.Time) error {
	if s.Settled() {
		return refuse(s, "record the kill of", "it is not running")
	}
	if s.Status() == record.StatusAttached {
		return refuse(s, "record the kill of", "a person works in its CLI")
	}
	if s.Stop == nil {
		s.Stop = &record.StopRequest{At: now, Reason: "killed by zwarm kill"}
	}
	reason := stopReason(s)
	if note != "" {
		reason += " (" + note + ")"
	}
	if t := s.Current(); t != nil && t.EndedAt == nil {
		statusfield.Set(t, record.StatusKilled)
		t.EndedAt, t.Error = &now, reason
	}
	s.Stop.Reason = reason
	return settle(s, now)
}

// abandon records that the session's owner died without recording the
// outcome: it failed, and msg says why.
func abandon(s *record.Session, msg string, now time.Time) error {
	if s.Settled() {
		return refuse(s, "abandon", "it is settled")
	}
	if s.Status() == record.StatusAttached {
		return refuse(s, "abandon", "a person's attach is ended by detach")
	}
	if t := s.Current(); t != nil && t.EndedAt == nil {
		statusfield.Set(t, record.StatusFailed)
		t.EndedAt, t.Error = &now, msg
	}
	stop := s.Stop
	s.Stop = nil
	unclaimWorkspace(s)
	if err := settle(s, now); err != nil {
		return err
	}
	statusfield.Set(s, record.StatusFailed)
	s.Error = msg
	if stop != nil {
		// A kill was in progress: it is what the user asked for.
		statusfield.Set(s, record.StatusKilled)
	}
	return nil
}

// failStart records that the session's agent could not be started.
func failStart(s *record.Session, reason string, now time.Time) error {
	if s.Settled() || s.TurnRunning() {
		return refuse(s, "fail the start of", "it is not waiting to start")
	}
	stop := s.Stop != nil
	if err := settle(s, now); err != nil {
		return err
	}
	switch {
	case stop:
		// settle recorded the kill and why (a time limit, zwarm kill):
		// what failed was cut short by it, and says less.
	case len(s.Turns) > 0:
		// A follow-up's turn never started (its job could not be
		// submitted, its setup failed): the session is as its last turn
		// left it, and the follow-up is the one not delivered (the
		// caller records why).
	default:
		statusfield.Set(s, record.StatusFailed)
		s.Error = reason
	}
	return nil
}

// interruptTurn marks the running turn to be stopped so that the thread goes
// on at once: with the follow-up r.InboxID, or in a person's CLI
// (r.Attacher). Its supervisor sees it and stops the agent as a kill
// does; endTurn records the turn interrupted.
func interruptTurn(s *record.Session, r record.InterruptRequest) error {
	if !s.Interruptible() {
		why := "no turn is running"
		switch {
		case s.Stop != nil:
			why = "a kill is in progress"
		case s.Interrupt != nil:
			why = fmt.Sprintf("turn %d is being interrupted already", s.Interrupt.Turn)
		}
		return refuse(s, "interrupt", why)
	}
	r.Turn = s.Turn
	s.Interrupt = &r
	return nil
}

// attach hands a settled session to a person, who works in its agent's own
// CLI, in its thread, through the attaching command owner.
func attach(s *record.Session, owner proc.Ref, now time.Time) error {
	switch {
	case s.Legacy:
		return refuse(s, "attach", "it was written by the Python zwarm")
	case !s.Settled():
		return refuse(s, "attach", "it is not settled")
	case s.ThreadID == "":
		return refuse(s, "attach", "its agent never reported a thread to resume")
	}
	s.Attaches = append(s.Attaches, record.AttachSpan{Start: now, PID: owner.PID, Was: s.Status(), WasError: s.Error})
	statusfield.Set(s, record.StatusAttached)
	s.Owner, s.Error, s.Killer = &owner, "", nil
	return nil
}

// handToAttacher attaches a session whose turn was interrupted for a
// person (or ended on its own meanwhile) to the attaching command the
// interrupt names, in the update that ended the turn: no follow-up starts
// in between. Queued follow-ups stay queued, for after the person leaves.
func handToAttacher(s *record.Session, now time.Time) error {
	r := s.Interrupt
	switch {
	case r == nil || r.Attacher == nil:
		return refuse(s, "hand to a person", "nobody asked for it")
	case s.Stop != nil:
		return refuse(s, "hand to a person", "a kill is in progress")
	case s.TurnRunning():
		return refuse(s, "hand to a person", fmt.Sprintf("turn %d is still running", s.Turn))
	case s.ThreadID == "":
		return refuse(s, "hand to a person", "its agent never reported a thread to resume")
	}
	// The session settles as it would have, but that an interrupted turn
	// is no failure: the person carries on from where it stopped.
	was, wasErr := record.StatusCompleted, ""
	if last := s.Current(); last != nil && last.Status() != record.StatusInterrupted {
		was, wasErr = last.Status(), last.Error
	} else {
		// The stopped agent's exit (143) is not the session's outcome:
		// "completed (exit 143)" would read as a failure.
		s.ExitCode = nil
	}
	s.Attaches = append(s.Attaches, record.AttachSpan{Start: now, PID: r.Attacher.PID, Was: was, WasError: wasErr})
	statusfield.Set(s, record.StatusAttached)
	s.Owner, s.Error, s.Interrupt = record.ClonePtr(r.Attacher), "", nil
	s.Agent, s.AgentLive = nil, false
	return nil
}

// withdrawAttach forgets that the attaching command token waits for the
// thread (it gave up): the interrupt goes on, as its agent may be
// stopping already, and only a follow-up may take over.
func withdrawAttach(s *record.Session, token string) {
	if r := s.Interrupt; r != nil && r.Attacher != nil && r.Attacher.Token == token {
		r.Attacher = nil
	}
}

// detach settles an attached session again, as it was before the attach:
// the person left the CLI (exit is its exit code), or note says how else
// the attach ended (its command died, say).
func detach(s *record.Session, exit *int, note string, now time.Time) error {
	if s.Status() != record.StatusAttached || len(s.Attaches) == 0 {
		return refuse(s, "detach", "it is not attached")
	}
	a := &s.Attaches[len(s.Attaches)-1]
	a.End, a.ExitCode, a.Note = &now, exit, note
	statusfield.Set(s, a.Was)
	s.Error, s.Owner, s.EndedAt = a.WasError, nil, &now
	if !s.Status().Finished() {
		statusfield.Set(s, record.StatusCompleted) // a record changed by hand
	}
	return nil
}

// FirstNonBlank is the first of ss that is not blank, trimmed: a
// recorded reason is never whitespace.
func FirstNonBlank(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// Remote reports whether the session's supervisor runs under a runner
// other than this host's.
func Remote(s *record.Session) bool {
	return s.Job != nil && s.Job.Runner != "" && s.Job.Runner != record.LocalRunner
}

// RunnerJudges says the session's runner, not a pid on this host, tells
// whether its owner lives: it was handed to another runner, and no
// command on this host is submitting its job or is attached to it (those
// are judged by their pid). Until the job's id is known, nothing can be
// told.
func RunnerJudges(s *record.Session) bool {
	return Remote(s) && (s.Owner == nil || s.Owner.Role != record.RoleSpawn && s.Owner.Role != record.RoleAttach)
}

// Pending is s as a new session starts: pending, until its supervisor
// claims it.
func Pending(s *record.Session) *record.Session {
	statusfield.Set(s, record.StatusPending)
	return s
}

// OwnerGoneUnrecorded is what a reader shows of c, a copy of a session
// whose owner died, when it cannot record that (a read-only state dir, or
// a lock held: a reader never waits): the record as it will be once
// recorded. An attached session settles as it was before the attach; any
// other fails, saying why.
func OwnerGoneUnrecorded(c *record.Session, attacherNote string, now time.Time) {
	if c.Status() == record.StatusAttached {
		detach(c, nil, attacherNote, now)
		return
	}
	statusfield.Set(c, record.StatusFailed)
	c.Error = "its supervisor is gone without recording the outcome"
}

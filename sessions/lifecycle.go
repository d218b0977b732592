package sessions

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
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

// Settled reports whether the session is at rest: no turn runs and none is
// about to start. Only then is its status final (until a follow-up).
func (s *Session) Settled() bool {
	if s.Legacy {
		return s.Status.Finished()
	}
	return s.Status.Finished() && s.Owner == nil
}

// Stopping reports whether a kill is in progress.
func (s *Session) Stopping() bool { return s.Stop != nil && !s.Settled() }

// killFinishing reports whether the command that killed the session is
// still finishing the kill (Killer). A kill has nothing left to do but
// sweep and record once the session settled, so a stamp older than a
// minute past the end is stale (a long-lived process whose kill could not
// clear it) and holds nothing up.
func (s *Session) killFinishing(now time.Time) bool {
	if !s.Killer.Alive() {
		return false
	}
	return s.Stop != nil || s.EndedAt == nil || now.Sub(*s.EndedAt) < time.Minute
}

// TurnRunning reports whether the current turn has started and not ended.
func (s *Session) TurnRunning() bool {
	t := s.current()
	return t != nil && t.EndedAt == nil
}

// TransitionError is a lifecycle step asked of a session in a state that
// does not allow it: a bug in the caller, or a record changed by hand.
type TransitionError struct {
	ID, Transition string
	From           Status
	Why            string
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("session %s: cannot %s a %s session: %s", ShortID(e.ID), e.Transition, e.From, e.Why)
}

func (s *Session) refuse(transition, why string) error {
	return &TransitionError{ID: s.ID, Transition: transition, From: s.Status, Why: why}
}

// claim makes the supervisor the owner of a pending session. With
// prepare, it is about to make the session's worktree before the first
// turn; it handles signals from now on, so a kill may signal it.
func (s *Session) claim(sv proc.Ref, prepare bool) error {
	if s.Status != StatusPending {
		return s.refuse("claim", "only a pending session waits for its supervisor")
	}
	if prepare && s.Workspace == nil {
		return s.refuse("claim", "it has no worktree to make")
	}
	s.Owner = &sv
	if prepare {
		s.Workspace.State, s.Workspace.Error = WorkspacePreparing, ""
	}
	return nil
}

// prepared records the session's worktree as made, at commit head, with
// what was brought into it. A worktree made again after its work was
// landed and removed starts a new change from head.
func (s *Session) prepared(m Made) error {
	ws := s.Workspace
	if ws == nil || ws.State != WorkspacePreparing {
		return s.refuse("record the worktree of", "it is not making one")
	}
	if ws.Landed != nil && ws.Landed.Head != m.Head {
		ws.BaseCommit, ws.Changes, ws.Landed, ws.Conflict = m.Head, &workspace.Stat{}, nil, nil
	}
	ws.State, ws.Head, ws.Error = WorkspaceReady, m.Head, ""
	ws.noteMade(m)
	return nil
}

// noteMade records what making the worktree made, whether or not it went
// on to succeed: its git dir, and what was brought along (never to be
// committed, even if the making fails after bringing it).
func (ws *Workspace) noteMade(m Made) {
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
func (s *Session) prepareFailed(m Made, reason string, now time.Time) error {
	if s.Workspace == nil || s.Workspace.State != WorkspacePreparing {
		return s.refuse("record the failed worktree of", "it is not making one")
	}
	s.Workspace.State, s.Workspace.Error = WorkspaceFailed, reason
	s.Workspace.noteMade(m)
	return s.failStart(reason, now)
}

// ownerAnswersSignals says the session's owner is a supervisor that has
// claimed it: it set up its handling of SIGTERM before claiming, so a kill
// may signal it. A pending session's owner has not claimed it yet (it may
// be a process a few instructions old, which SIGTERM would simply end): it
// sees a recorded kill when it claims the session.
func (s *Session) ownerAnswersSignals() bool {
	claimed := s.Status != StatusPending || s.Workspace != nil && s.Workspace.State == WorkspacePreparing
	return s.Owner != nil && s.Owner.Role == roleSupervisor && claimed && !s.Settled()
}

// turnStart is what starts a turn.
type turnStart struct {
	Prompt  string
	InboxID string
	Resumed bool // continues the agent's thread natively
	Live    bool // delivered to the agent process of the previous turn
}

// startTurn begins the next turn: the task, or a follow-up.
func (s *Session) startTurn(ts turnStart, now time.Time) error {
	switch {
	case s.Stop != nil:
		return s.refuse("start a turn of", "a kill is in progress")
	case s.TurnRunning():
		return s.refuse("start a turn of", fmt.Sprintf("turn %d is still running", s.Turn))
	case s.Status != StatusPending && s.Status != StatusRunning:
		return s.refuse("start a turn of", "reopen it first")
	}
	s.Turns = append(s.Turns, Turn{N: len(s.Turns) + 1, Prompt: ts.Prompt, InboxID: ts.InboxID,
		StartedAt: now, Status: StatusRunning, Resumed: ts.Resumed, Live: ts.Live})
	s.Status, s.EndedAt, s.ExitCode, s.Error = StatusRunning, nil, nil, ""
	s.Turn = len(s.Turns)
	return nil
}

// endTurn records how the running turn ended. The session stays running,
// between turns: the same update either starts the next turn or settles.
func (s *Session) endTurn(e TurnEnd, now time.Time) error {
	if !s.TurnRunning() {
		return s.refuse("end a turn of", "no turn is running")
	}
	t := s.current()
	t.EndedAt, t.ExitCode = &now, e.ExitCode
	t.Notes = append(t.Notes, e.Notes...)
	switch {
	case e.Interrupted && s.Stop == nil && s.Interrupt != nil && s.Interrupt.Turn == t.N:
		// Not failed: stopped so that the thread goes on at once.
		t.Status, t.Error = StatusInterrupted, ""
		note := "interrupted: a follow-up took over the thread"
		switch r := s.Interrupt; {
		case r.Attacher != nil:
			note = "interrupted: a person took over the thread (zwarm attach)"
		case r.InboxID == "":
			note = "interrupted for zwarm attach, which gave up before the thread was handed over"
		}
		t.Notes = append(t.Notes, note)
	case e.Killed:
		t.Status, t.Error = StatusKilled, firstNonEmpty(s.stopReason(), "killed by zwarm kill")
	case e.Reason != "":
		t.Status, t.Error = StatusFailed, e.Reason
	case t.AgentFailed || e.ExitCode == nil || *e.ExitCode != 0:
		t.Status = StatusFailed
		if t.Error == "" {
			code := "no exit code"
			if e.ExitCode != nil {
				code = fmt.Sprintf("exited with code %d", *e.ExitCode)
			}
			t.Error = firstNonEmpty(t.AgentError, e.StderrTail, fmt.Sprintf("%s %s", e.Adapter, code))
		}
	default:
		t.Status = StatusCompleted
	}
	s.ExitCode, s.Agent, s.AgentLive = e.ExitCode, nil, false
	return nil
}

// handOver ends the running turn of a live agent, which just completed it,
// and starts the follow-up it is about to be given as the next turn.
func (s *Session) handOver(ts turnStart, now time.Time) error {
	if !s.TurnRunning() {
		return s.refuse("hand over", "no turn is running")
	}
	if s.Stop != nil {
		return s.refuse("hand over", "a kill is in progress")
	}
	if s.Interrupt != nil && s.Interrupt.Attacher != nil {
		return s.refuse("hand over", "a person is about to take over the thread")
	}
	t := s.current()
	t.EndedAt, t.Status = &now, StatusCompleted
	if t.AgentFailed {
		t.Status = StatusFailed
		t.Error = firstNonEmpty(t.Error, t.AgentError, "the agent reported failure")
	}
	s.Turns = append(s.Turns, Turn{N: len(s.Turns) + 1, Prompt: ts.Prompt, InboxID: ts.InboxID,
		StartedAt: now, Status: StatusRunning, Resumed: true, Live: true})
	s.Turn = len(s.Turns)
	// An interrupt of the turn that just completed is moot: its follow-up,
	// delivered first, is the turn that starts now.
	s.Interrupt = nil
	return nil
}

// settle ends the session's activity: its status becomes its last turn's,
// and nobody owns it any more.
func (s *Session) settle(now time.Time) error {
	if s.TurnRunning() {
		return s.refuse("settle", fmt.Sprintf("turn %d is still running", s.Turn))
	}
	if s.Settled() {
		return s.refuse("settle", "it is already settled")
	}
	if s.Status == StatusAttached {
		return s.refuse("settle", "a person works in its CLI: detach it")
	}
	switch last := s.current(); {
	case s.Stop != nil:
		s.Status = StatusKilled
		if last == nil || last.Status != StatusKilled {
			s.Error = s.stopReason()
		} else {
			s.Error = last.Error
		}
	case last == nil:
		s.Status = StatusFailed
		s.Error = firstNonEmpty(s.Error, "no turn ran")
	case last.Status == StatusInterrupted:
		// Nothing took over the thread (an attach --interrupt given up):
		// zwarm stopped the turn, so the session was killed.
		s.Status, s.Error = StatusKilled, "its turn was interrupted and nothing took over the thread"
	default:
		s.Status, s.Error = last.Status, last.Error
	}
	s.Owner, s.Agent, s.AgentLive, s.Stop, s.PendingInjects, s.Interrupt = nil, nil, false, nil, 0, nil
	s.EndedAt = &now
	return nil
}

// reopen makes a settled session pending again for a follow-up; owner is
// the command that will start its new supervisor.
func (s *Session) reopen(owner proc.Ref) error {
	if !s.Settled() {
		return s.refuse("reopen", "it is not settled")
	}
	s.Status, s.Owner, s.EndedAt, s.Error, s.Killer = StatusPending, &owner, nil, "", nil
	s.unclaimWorkspace()
	return nil
}

// unclaimWorkspace forgets that a supervisor was making the worktree:
// until the next one claims the session, nobody is.
func (s *Session) unclaimWorkspace() {
	if ws := s.Workspace; ws != nil && ws.State == WorkspacePreparing {
		ws.State = WorkspaceNew
	}
}

// requestStop marks a kill in progress: from now on no turn starts and no
// follow-up is handed over, whoever owns the session.
func (s *Session) requestStop(reason string, now time.Time) error {
	if s.Settled() {
		return s.refuse("stop", "it is not running")
	}
	if s.Status == StatusAttached {
		return s.refuse("stop", "a person works in its CLI; it settles when they leave it")
	}
	if s.Stop == nil {
		s.Stop = &StopRequest{At: now, Reason: reason}
	}
	return nil
}

func (s *Session) stopReason() string {
	if s.Stop != nil && s.Stop.Reason != "" {
		return s.Stop.Reason
	}
	return "killed by zwarm kill"
}

// stopped records a kill that nobody else recorded: the owner was gone or
// could not be reached. note says so.
func (s *Session) stopped(note string, now time.Time) error {
	if s.Settled() {
		return s.refuse("record the kill of", "it is not running")
	}
	if s.Status == StatusAttached {
		return s.refuse("record the kill of", "a person works in its CLI")
	}
	if s.Stop == nil {
		s.Stop = &StopRequest{At: now, Reason: "killed by zwarm kill"}
	}
	reason := s.stopReason()
	if note != "" {
		reason += " (" + note + ")"
	}
	if t := s.current(); t != nil && t.EndedAt == nil {
		t.Status, t.EndedAt, t.Error = StatusKilled, &now, reason
	}
	s.Stop.Reason = reason
	return s.settle(now)
}

// abandon records that the session's owner died without recording the
// outcome: it failed, and msg says why.
func (s *Session) abandon(msg string, now time.Time) error {
	if s.Settled() {
		return s.refuse("abandon", "it is settled")
	}
	if s.Status == StatusAttached {
		return s.refuse("abandon", "a person's attach is ended by detach")
	}
	if t := s.current(); t != nil && t.EndedAt == nil {
		t.Status, t.EndedAt, t.Error = StatusFailed, &now, msg
	}
	stop := s.Stop
	s.Stop = nil
	s.unclaimWorkspace()
	if err := s.settle(now); err != nil {
		return err
	}
	s.Status, s.Error = StatusFailed, msg
	if stop != nil {
		// A kill was in progress: it is what the user asked for.
		s.Status = StatusKilled
	}
	return nil
}

// failStart records that the session's agent could not be started.
func (s *Session) failStart(reason string, now time.Time) error {
	if s.Settled() || s.TurnRunning() {
		return s.refuse("fail the start of", "it is not waiting to start")
	}
	stop := s.Stop != nil
	if err := s.settle(now); err != nil {
		return err
	}
	s.Status, s.Error = StatusFailed, reason
	if stop {
		s.Status = StatusKilled
	}
	return nil
}

// Interruptible is the one answer to "can it take an interrupt?": a turn
// runs that nothing else is stopping (no kill in progress, no earlier
// interrupt still at work). A session that cannot (settled, attached,
// pending, or already being stopped) takes the follow-up as inject does.
func (s *Session) Interruptible() bool {
	return !s.Legacy && s.Status == StatusRunning && s.TurnRunning() && s.Stop == nil && s.Interrupt == nil
}

// interrupt marks the running turn to be stopped so that the thread goes
// on at once: with the follow-up r.InboxID, or in a person's CLI
// (r.Attacher). Its supervisor sees it and stops the agent as a kill
// does; endTurn records the turn interrupted.
func (s *Session) interrupt(r InterruptRequest) error {
	if !s.Interruptible() {
		why := "no turn is running"
		switch {
		case s.Stop != nil:
			why = "a kill is in progress"
		case s.Interrupt != nil:
			why = fmt.Sprintf("turn %d is being interrupted already", s.Interrupt.Turn)
		}
		return s.refuse("interrupt", why)
	}
	r.Turn = s.Turn
	s.Interrupt = &r
	return nil
}

// attach hands a settled session to a person, who works in its agent's own
// CLI, in its thread, through the attaching command owner.
func (s *Session) attach(owner proc.Ref, now time.Time) error {
	switch {
	case s.Legacy:
		return s.refuse("attach", "it was written by the Python zwarm")
	case !s.Settled():
		return s.refuse("attach", "it is not settled")
	case s.ThreadID == "":
		return s.refuse("attach", "its agent never reported a thread to resume")
	}
	s.Attaches = append(s.Attaches, AttachSpan{Start: now, PID: owner.PID, Was: s.Status, WasError: s.Error})
	s.Status, s.Owner, s.Error, s.Killer = StatusAttached, &owner, "", nil
	return nil
}

// handToAttacher attaches a session whose turn was interrupted for a
// person (or ended on its own meanwhile) to the attaching command the
// interrupt names, in the update that ended the turn: no follow-up starts
// in between. Queued follow-ups stay queued, for after the person leaves.
func (s *Session) handToAttacher(now time.Time) error {
	r := s.Interrupt
	switch {
	case r == nil || r.Attacher == nil:
		return s.refuse("hand to a person", "nobody asked for it")
	case s.Stop != nil:
		return s.refuse("hand to a person", "a kill is in progress")
	case s.TurnRunning():
		return s.refuse("hand to a person", fmt.Sprintf("turn %d is still running", s.Turn))
	case s.ThreadID == "":
		return s.refuse("hand to a person", "its agent never reported a thread to resume")
	}
	// The session settles as it would have, but that an interrupted turn
	// is no failure: the person carries on from where it stopped.
	was, wasErr := StatusCompleted, ""
	if last := s.current(); last != nil && last.Status != StatusInterrupted {
		was, wasErr = last.Status, last.Error
	} else {
		// The stopped agent's exit (143) is not the session's outcome:
		// "completed (exit 143)" would read as a failure.
		s.ExitCode = nil
	}
	s.Attaches = append(s.Attaches, AttachSpan{Start: now, PID: r.Attacher.PID, Was: was, WasError: wasErr})
	s.Status, s.Owner, s.Error, s.Interrupt = StatusAttached, clonePtr(r.Attacher), "", nil
	s.Agent, s.AgentLive = nil, false
	return nil
}

// withdrawAttach forgets that the attaching command token waits for the
// thread (it gave up): the interrupt goes on, as its agent may be
// stopping already, and only a follow-up may take over.
func (s *Session) withdrawAttach(token string) {
	if r := s.Interrupt; r != nil && r.Attacher != nil && r.Attacher.Token == token {
		r.Attacher = nil
	}
}

// detach settles an attached session again, as it was before the attach:
// the person left the CLI (exit is its exit code), or note says how else
// the attach ended (its command died, say).
func (s *Session) detach(exit *int, note string, now time.Time) error {
	if s.Status != StatusAttached || len(s.Attaches) == 0 {
		return s.refuse("detach", "it is not attached")
	}
	a := &s.Attaches[len(s.Attaches)-1]
	a.End, a.ExitCode, a.Note = &now, exit, note
	s.Status, s.Error, s.Owner, s.EndedAt = a.Was, a.WasError, nil, &now
	if !s.Status.Finished() {
		s.Status = StatusCompleted // a record changed by hand
	}
	return nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

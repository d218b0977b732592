package sessions

import (
	"errors"
	"github.com/zwarm/zwarm/sessions/proc"
	"testing"
	"time"
)

// state builds a session in one of the lifecycle's states.
func state(name string) *Session {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sup := &proc.Ref{PID: 2, Start: 2, Role: roleSupervisor}
	spawner := &proc.Ref{PID: 1, Start: 1, Role: roleSpawn}
	code := 0
	ended := func(st Status) Turn {
		return Turn{N: 1, Prompt: "task", StartedAt: now, EndedAt: &now, ExitCode: &code, Status: st}
	}
	s := &Session{ID: "3f2a0000-0000-4000-8000-000000000001", Task: "task", Adapter: "codex"}
	switch name {
	case "pending":
		s.Status, s.Owner = StatusPending, spawner
	case "claimed":
		s.Status, s.Owner = StatusPending, sup
	case "running":
		s.Status, s.Owner = StatusRunning, sup
		s.Turns = []Turn{{N: 1, Prompt: "task", StartedAt: now, Status: StatusRunning}}
	case "between":
		s.Status, s.Owner = StatusRunning, sup
		s.Turns = []Turn{ended(StatusCompleted)}
	case "completed", "failed", "killed":
		s.Status, s.EndedAt = Status(name), &now
		s.Turns = []Turn{ended(Status(name))}
	case "stopping":
		s.Status, s.Owner, s.Stop = StatusRunning, sup, &StopRequest{At: now, Reason: "killed by zwarm kill"}
		s.Turns = []Turn{{N: 1, Prompt: "task", StartedAt: now, Status: StatusRunning}}
	case "interrupting", "interrupting for attach":
		s.Status, s.Owner = StatusRunning, sup
		s.Turns = []Turn{{N: 1, Prompt: "task", StartedAt: now, Status: StatusRunning}}
		s.Interrupt = &InterruptRequest{At: now, Turn: 1, InboxID: "e1"}
		if name == "interrupting for attach" {
			s.Interrupt = &InterruptRequest{At: now, Turn: 1, Attacher: attacher}
		}
	case "interrupted for attach":
		s.Status, s.Owner = StatusRunning, sup
		s.Turns = []Turn{ended(StatusInterrupted)}
		s.Interrupt = &InterruptRequest{At: now, Turn: 1, Attacher: attacher}
	case "attached":
		s.Status, s.Owner, s.EndedAt = StatusAttached, attacher, &now
		s.Turns = []Turn{ended(StatusCompleted)}
		s.Attaches = []AttachSpan{{Start: now, PID: attacher.PID, Was: StatusCompleted}}
	}
	s.ThreadID = "0199a213-81c0-7800-8aa1-bbab2a035a53"
	s.Turn = len(s.Turns)
	return s
}

// attacher is the zwarm attach of the lifecycle's test states.
var attacher = &proc.Ref{PID: 3, Start: 3, Role: roleAttach, Token: "t3"}

// describe reduces a session to what the lifecycle table talks about.
func describe(s *Session) string {
	d := string(s.Status)
	switch {
	case s.Settled():
		d += "/settled"
	case s.TurnRunning():
		d += "/turn"
	default:
		d += "/between"
	}
	if s.Stop != nil {
		d += "/stop"
	}
	if s.Interrupt != nil {
		d += "/interrupt"
	}
	return d
}

func TestLifecycleTransitions(t *testing.T) {
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	code0, code1, code143 := 0, 1, 143
	sup := proc.Ref{PID: 9, Start: 9, Role: roleSupervisor}
	tests := []struct {
		from, transition string
		apply            func(*Session) error
		want             string // "" when the transition must be refused
	}{
		{"pending", "claim", func(s *Session) error { return s.claim(sup, false) }, "pending/between"},
		{"running", "claim", func(s *Session) error { return s.claim(sup, false) }, ""},
		{"claimed", "startTurn", func(s *Session) error { return s.startTurn(turnStart{Prompt: "task"}, now) }, "running/turn"},
		{"between", "startTurn", func(s *Session) error { return s.startTurn(turnStart{Prompt: "more"}, now) }, "running/turn"},
		{"running", "startTurn", func(s *Session) error { return s.startTurn(turnStart{Prompt: "more"}, now) }, ""},
		{"completed", "startTurn", func(s *Session) error { return s.startTurn(turnStart{Prompt: "more"}, now) }, ""},
		{"stopping", "startTurn", func(s *Session) error { return s.startTurn(turnStart{Prompt: "more"}, now) }, ""},
		{"running", "endTurn ok", func(s *Session) error { return s.endTurn(TurnEnd{ExitCode: &code0}, now) }, "running/between"},
		{"running", "endTurn exit 1", func(s *Session) error { return s.endTurn(TurnEnd{ExitCode: &code1}, now) }, "running/between"},
		{"between", "endTurn", func(s *Session) error { return s.endTurn(TurnEnd{ExitCode: &code0}, now) }, ""},
		{"running", "handOver", func(s *Session) error { return s.handOver(turnStart{Prompt: "more"}, now) }, "running/turn"},
		{"stopping", "handOver", func(s *Session) error { return s.handOver(turnStart{Prompt: "more"}, now) }, ""},
		{"between", "settle", func(s *Session) error { return s.settle(now) }, "completed/settled"},
		{"running", "settle", func(s *Session) error { return s.settle(now) }, ""},
		{"completed", "settle", func(s *Session) error { return s.settle(now) }, ""},
		{"completed", "reopen", func(s *Session) error { return s.reopen(sup) }, "pending/between"},
		{"killed", "reopen", func(s *Session) error { return s.reopen(sup) }, "pending/between"},
		{"running", "reopen", func(s *Session) error { return s.reopen(sup) }, ""},
		{"running", "requestStop", func(s *Session) error { return s.requestStop("killed by zwarm kill", now) }, "running/turn/stop"},
		{"pending", "requestStop", func(s *Session) error { return s.requestStop("killed by zwarm kill", now) }, "pending/between/stop"},
		{"failed", "requestStop", func(s *Session) error { return s.requestStop("killed by zwarm kill", now) }, ""},
		{"stopping", "endTurn killed", func(s *Session) error { return s.endTurn(TurnEnd{ExitCode: &code143, Killed: true}, now) }, "running/between/stop"},
		{"running", "stopped", func(s *Session) error { return s.stopped("the supervisor was gone", now) }, "killed/settled"},
		{"pending", "stopped", func(s *Session) error { return s.stopped("", now) }, "killed/settled"},
		{"completed", "stopped", func(s *Session) error { return s.stopped("", now) }, ""},
		{"running", "abandon", func(s *Session) error { return s.abandon("supervisor died", now) }, "failed/settled"},
		{"stopping", "abandon", func(s *Session) error { return s.abandon("supervisor died", now) }, "killed/settled"},
		{"completed", "abandon", func(s *Session) error { return s.abandon("x", now) }, ""},
		{"claimed", "failStart", func(s *Session) error { return s.failStart("no binary", now) }, "failed/settled"},
		{"running", "failStart", func(s *Session) error { return s.failStart("no binary", now) }, ""},

		{"running", "interrupt", func(s *Session) error { return s.interrupt(InterruptRequest{InboxID: "e2"}) }, "running/turn/interrupt"},
		{"interrupting", "interrupt", func(s *Session) error { return s.interrupt(InterruptRequest{InboxID: "e2"}) }, ""},
		{"stopping", "interrupt", func(s *Session) error { return s.interrupt(InterruptRequest{InboxID: "e2"}) }, ""},
		{"between", "interrupt", func(s *Session) error { return s.interrupt(InterruptRequest{InboxID: "e2"}) }, ""},
		{"claimed", "interrupt", func(s *Session) error { return s.interrupt(InterruptRequest{InboxID: "e2"}) }, ""},
		{"completed", "interrupt", func(s *Session) error { return s.interrupt(InterruptRequest{InboxID: "e2"}) }, ""},
		{"attached", "interrupt", func(s *Session) error { return s.interrupt(InterruptRequest{InboxID: "e2"}) }, ""},
		{"interrupting", "endTurn interrupted", func(s *Session) error {
			return s.endTurn(TurnEnd{ExitCode: &code143, Killed: true, Interrupted: true}, now)
		}, "running/between/interrupt"},
		{"interrupting", "handOver", func(s *Session) error { return s.handOver(turnStart{Prompt: "more"}, now) }, "running/turn"},
		{"interrupting for attach", "handOver", func(s *Session) error { return s.handOver(turnStart{Prompt: "more"}, now) }, ""},
		{"interrupting", "requestStop", func(s *Session) error { return s.requestStop("killed by zwarm kill", now) }, "running/turn/stop/interrupt"},
		{"interrupting", "settle", func(s *Session) error { return s.settle(now) }, ""},

		{"completed", "attach", func(s *Session) error { return s.attach(*attacher, now) }, "attached/between"},
		{"failed", "attach", func(s *Session) error { return s.attach(*attacher, now) }, "attached/between"},
		{"running", "attach", func(s *Session) error { return s.attach(*attacher, now) }, ""},
		{"pending", "attach", func(s *Session) error { return s.attach(*attacher, now) }, ""},
		{"attached", "attach", func(s *Session) error { return s.attach(*attacher, now) }, ""},
		{"interrupted for attach", "handToAttacher", func(s *Session) error { return s.handToAttacher(now) }, "attached/between"},
		{"interrupting for attach", "handToAttacher", func(s *Session) error { return s.handToAttacher(now) }, ""},
		{"between", "handToAttacher", func(s *Session) error { return s.handToAttacher(now) }, ""},
		{"attached", "detach", func(s *Session) error { return s.detach(&code0, "", now) }, "completed/settled"},
		{"completed", "detach", func(s *Session) error { return s.detach(&code0, "", now) }, ""},
		{"running", "detach", func(s *Session) error { return s.detach(&code0, "", now) }, ""},
		{"attached", "startTurn", func(s *Session) error { return s.startTurn(turnStart{Prompt: "more"}, now) }, ""},
		{"attached", "reopen", func(s *Session) error { return s.reopen(sup) }, ""},
		{"attached", "settle", func(s *Session) error { return s.settle(now) }, ""},
		{"attached", "requestStop", func(s *Session) error { return s.requestStop("killed by zwarm kill", now) }, ""},
		{"attached", "stopped", func(s *Session) error { return s.stopped("", now) }, ""},
		{"attached", "abandon", func(s *Session) error { return s.abandon("x", now) }, ""},
		{"attached", "failStart", func(s *Session) error { return s.failStart("x", now) }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.from+"/"+tc.transition, func(t *testing.T) {
			s := state(tc.from)
			before := describe(s)
			err := tc.apply(s)
			if tc.want == "" {
				var te *TransitionError
				if !errors.As(err, &te) {
					t.Fatalf("%s from %s: want a TransitionError, got %v", tc.transition, tc.from, err)
				}
				if got := describe(s); got != before {
					t.Fatalf("a refused transition changed the session: %s -> %s", before, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s from %s: %v", tc.transition, tc.from, err)
			}
			if got := describe(s); got != tc.want {
				t.Fatalf("%s from %s: got %s, want %s", tc.transition, tc.from, got, tc.want)
			}
			// Whatever is settled has nobody owning it and an end time.
			if s.Settled() && (s.Owner != nil || s.EndedAt == nil || s.Agent != nil || s.Stop != nil || s.Interrupt != nil) {
				t.Fatalf("settled but owner %v ended %v agent %v stop %v interrupt %v", s.Owner, s.EndedAt, s.Agent, s.Stop, s.Interrupt)
			}
			// Whoever is attached owns it, in an open span.
			if s.Status == StatusAttached && (s.Owner == nil || s.Owner.Role != roleAttach || s.Attaches[len(s.Attaches)-1].End != nil) {
				t.Fatalf("attached but owner %v spans %+v", s.Owner, s.Attaches)
			}
		})
	}
}

// A turn's end never shows the session completed while a follow-up is about
// to start: the end and the next start happen in one update.
func TestEndThenStartNeverSettles(t *testing.T) {
	s := state("running")
	now := time.Now()
	code := 0
	if err := s.endTurn(TurnEnd{ExitCode: &code}, now); err != nil {
		t.Fatal(err)
	}
	if s.Settled() || s.Status != StatusRunning {
		t.Fatalf("between turns the session reads %s (settled %v)", s.Status, s.Settled())
	}
	if err := s.startTurn(turnStart{Prompt: "next"}, now); err != nil {
		t.Fatal(err)
	}
	if s.Turns[0].Status != StatusCompleted || s.Turns[1].Status != StatusRunning || s.Turn != 2 {
		t.Fatalf("turns %+v", s.Turns)
	}
}

// How a turn ended decides its status and the reason shown.
func TestEndTurnOutcomes(t *testing.T) {
	now := time.Now()
	code := func(c int) *int { return &c }
	tests := []struct {
		name   string
		prep   func(*Turn)
		end    TurnEnd
		status Status
		reason string
	}{
		{"clean exit", nil, TurnEnd{ExitCode: code(0)}, StatusCompleted, ""},
		{"agent reported failure", func(t *Turn) { t.AgentFailed, t.Error = true, "model 500" }, TurnEnd{ExitCode: code(0)}, StatusFailed, "model 500"},
		{"exit 1 with an error event", func(t *Turn) { t.AgentError = "stream cut" }, TurnEnd{ExitCode: code(1)}, StatusFailed, "stream cut"},
		{"exit 1 with stderr", nil, TurnEnd{ExitCode: code(1), StderrTail: "Error: bad flag", Adapter: "codex"}, StatusFailed, "Error: bad flag"},
		{"exit 2, nothing said", nil, TurnEnd{ExitCode: code(2), Adapter: "codex"}, StatusFailed, "codex exited with code 2"},
		{"killed", nil, TurnEnd{ExitCode: code(143), Killed: true}, StatusKilled, "killed by zwarm kill"},
		{"disk full", nil, TurnEnd{ExitCode: code(143), Reason: "no space left on device"}, StatusFailed, "no space left on device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := state("running")
			if tc.prep != nil {
				tc.prep(&s.Turns[0])
			}
			if err := s.endTurn(tc.end, now); err != nil {
				t.Fatal(err)
			}
			if err := s.settle(now); err != nil {
				t.Fatal(err)
			}
			if s.Status != tc.status || s.Turns[0].Status != tc.status || s.Error != tc.reason {
				t.Fatalf("status %s (turn %s), error %q; want %s, %q", s.Status, s.Turns[0].Status, s.Error, tc.status, tc.reason)
			}
		})
	}
}

// An interrupted turn is recorded as such, not as failed or killed: the
// thread goes on; only a kill that came too makes it killed.
func TestInterruptedTurn(t *testing.T) {
	now := time.Now()
	code := 143
	s := state("interrupting")
	if err := s.endTurn(TurnEnd{ExitCode: &code, Killed: true, Interrupted: true}, now); err != nil {
		t.Fatal(err)
	}
	tr := s.Turns[0]
	if tr.Status != StatusInterrupted || tr.Error != "" || len(tr.Notes) != 1 || tr.Notes[0] != "interrupted: a follow-up took over the thread" {
		t.Fatalf("turn %+v", tr)
	}
	// Nothing took over (the follow-up is not there): zwarm stopped it.
	if err := s.settle(now); err != nil {
		t.Fatal(err)
	}
	if s.Status != StatusKilled || s.Interrupt != nil || s.Error == "" {
		t.Fatalf("settled as %s (%q), interrupt %v", s.Status, s.Error, s.Interrupt)
	}

	s = state("interrupting")
	s.requestStop("killed by zwarm kill", now)
	if err := s.endTurn(TurnEnd{ExitCode: &code, Killed: true, Interrupted: true}, now); err != nil {
		t.Fatal(err)
	}
	if s.Turns[0].Status != StatusKilled {
		t.Fatalf("a kill during an interrupt: turn %s", s.Turns[0].Status)
	}
}

// A person who interrupted a turn to attach gets the session as a
// completed one: when they leave, it settles as completed, not as killed.
func TestAttachAfterInterruptSettlesCompleted(t *testing.T) {
	now := time.Now()
	s := state("interrupted for attach")
	if err := s.handToAttacher(now); err != nil {
		t.Fatal(err)
	}
	if s.Owner == nil || s.Owner.Token != attacher.Token || s.Interrupt != nil {
		t.Fatalf("owner %v interrupt %v", s.Owner, s.Interrupt)
	}
	code := 0
	if err := s.detach(&code, "", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	a := s.Attaches[0]
	if s.Status != StatusCompleted || !s.Settled() || a.End == nil || a.End.Sub(a.Start) != time.Minute || *a.ExitCode != 0 {
		t.Fatalf("status %s settled %v span %+v", s.Status, s.Settled(), a)
	}
	// A failed session a person attached to is failed again after.
	s = state("failed")
	s.Error = "tests fail"
	s.attach(*attacher, now)
	if s.Error != "" {
		t.Fatalf("attached, the error reads %q", s.Error)
	}
	s.detach(nil, "", now)
	if s.Status != StatusFailed || s.Error != "tests fail" {
		t.Fatalf("after the attach: %s %q", s.Status, s.Error)
	}
}

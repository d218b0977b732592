package state

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/internal/statusfield"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
)

// state builds a session in one of the lifecycle's states.
func state(name string) *record.Session {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sup := &proc.Ref{PID: 2, Start: 2, Role: record.RoleSupervisor}
	spawner := &proc.Ref{PID: 1, Start: 1, Role: record.RoleSpawn}
	code := 0
	ended := func(st record.Status) record.Turn {
		return statusfield.With(record.Turn{N: 1, Prompt: "task", StartedAt: now, EndedAt: &now, ExitCode: &code}, st)
	}
	s := &record.Session{ID: "3f2a0000-0000-4000-8000-000000000001", Task: "task", Adapter: "codex"}
	switch name {
	case "pending":
		statusfield.Set(s, record.StatusPending)
		s.Owner = spawner
	case "claimed":
		statusfield.Set(s, record.StatusPending)
		s.Owner = sup
	case "running":
		statusfield.Set(s, record.StatusRunning)
		s.Owner = sup
		s.Turns = []record.Turn{statusfield.With(record.Turn{N: 1, Prompt: "task", StartedAt: now}, record.StatusRunning)}
	case "between":
		statusfield.Set(s, record.StatusRunning)
		s.Owner = sup
		s.Turns = []record.Turn{ended(record.StatusCompleted)}
	case "completed", "failed", "killed":
		statusfield.Set(s, record.Status(name))
		s.EndedAt = &now
		s.Turns = []record.Turn{ended(record.Status(name))}
	case "stopping":
		statusfield.Set(s, record.StatusRunning)
		s.Owner, s.Stop = sup, &record.StopRequest{At: now, Reason: "killed by zwarm kill"}
		s.Turns = []record.Turn{statusfield.With(record.Turn{N: 1, Prompt: "task", StartedAt: now}, record.StatusRunning)}
	case "interrupting", "interrupting for attach":
		statusfield.Set(s, record.StatusRunning)
		s.Owner = sup
		s.Turns = []record.Turn{statusfield.With(record.Turn{N: 1, Prompt: "task", StartedAt: now}, record.StatusRunning)}
		s.Interrupt = &record.InterruptRequest{At: now, Turn: 1, InboxID: "e1"}
		if name == "interrupting for attach" {
			s.Interrupt = &record.InterruptRequest{At: now, Turn: 1, Attacher: attacher}
		}
	case "interrupted for attach":
		statusfield.Set(s, record.StatusRunning)
		s.Owner = sup
		s.Turns = []record.Turn{ended(record.StatusInterrupted)}
		s.Interrupt = &record.InterruptRequest{At: now, Turn: 1, Attacher: attacher}
	case "attached":
		statusfield.Set(s, record.StatusAttached)
		s.Owner, s.EndedAt = attacher, &now
		s.Turns = []record.Turn{ended(record.StatusCompleted)}
		s.Attaches = []record.AttachSpan{{Start: now, PID: attacher.PID, Was: record.StatusCompleted}}
	}
	s.ThreadID = "0199a213-81c0-7800-8aa1-bbab2a035a53"
	s.Turn = len(s.Turns)
	return s
}

// attacher is the zwarm attach of the lifecycle's test states.
var attacher = &proc.Ref{PID: 3, Start: 3, Role: record.RoleAttach, Token: "t3"}

// describe reduces a session to what the lifecycle table talks about.
func describe(s *record.Session) string {
	d := string(s.Status())
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
	sup := proc.Ref{PID: 9, Start: 9, Role: record.RoleSupervisor}
	tests := []struct {
		from, transition string
		apply            func(*record.Session) error
		want             string // "" when the transition must be refused
	}{
		{"pending", "claim", func(s *record.Session) error { return claim(s, sup, false) }, "pending/between"},
		{"running", "claim", func(s *record.Session) error { return claim(s, sup, false) }, ""},
		{"claimed", "startTurn", func(s *record.Session) error { return startTurn(s, turnStart{Prompt: "task"}, now) }, "running/turn"},
		{"between", "startTurn", func(s *record.Session) error { return startTurn(s, turnStart{Prompt: "more"}, now) }, "running/turn"},
		{"running", "startTurn", func(s *record.Session) error { return startTurn(s, turnStart{Prompt: "more"}, now) }, ""},
		{"completed", "startTurn", func(s *record.Session) error { return startTurn(s, turnStart{Prompt: "more"}, now) }, ""},
		{"stopping", "startTurn", func(s *record.Session) error { return startTurn(s, turnStart{Prompt: "more"}, now) }, ""},
		{"running", "endTurn ok", func(s *record.Session) error { return endTurn(s, TurnEnd{ExitCode: &code0}, now) }, "running/between"},
		{"running", "endTurn exit 1", func(s *record.Session) error { return endTurn(s, TurnEnd{ExitCode: &code1}, now) }, "running/between"},
		{"between", "endTurn", func(s *record.Session) error { return endTurn(s, TurnEnd{ExitCode: &code0}, now) }, ""},
		{"running", "handOver", func(s *record.Session) error { return handOver(s, turnStart{Prompt: "more"}, now) }, "running/turn"},
		{"stopping", "handOver", func(s *record.Session) error { return handOver(s, turnStart{Prompt: "more"}, now) }, ""},
		{"between", "settle", func(s *record.Session) error { return settle(s, now) }, "completed/settled"},
		{"running", "settle", func(s *record.Session) error { return settle(s, now) }, ""},
		{"completed", "settle", func(s *record.Session) error { return settle(s, now) }, ""},
		{"completed", "reopen", func(s *record.Session) error { return reopen(s, sup) }, "pending/between"},
		{"killed", "reopen", func(s *record.Session) error { return reopen(s, sup) }, "pending/between"},
		{"running", "reopen", func(s *record.Session) error { return reopen(s, sup) }, ""},
		{"running", "requestStop", func(s *record.Session) error { return requestStop(s, "killed by zwarm kill", now) }, "running/turn/stop"},
		{"pending", "requestStop", func(s *record.Session) error { return requestStop(s, "killed by zwarm kill", now) }, "pending/between/stop"},
		{"failed", "requestStop", func(s *record.Session) error { return requestStop(s, "killed by zwarm kill", now) }, ""},
		{"stopping", "endTurn killed", func(s *record.Session) error { return endTurn(s, TurnEnd{ExitCode: &code143, Killed: true}, now) }, "running/between/stop"},
		{"running", "stopped", func(s *record.Session) error { return stopped(s, "the supervisor was gone", now) }, "killed/settled"},
		{"pending", "stopped", func(s *record.Session) error { return stopped(s, "", now) }, "killed/settled"},
		{"completed", "stopped", func(s *record.Session) error { return stopped(s, "", now) }, ""},
		{"running", "abandon", func(s *record.Session) error { return abandon(s, "supervisor died", now) }, "failed/settled"},
		{"stopping", "abandon", func(s *record.Session) error { return abandon(s, "supervisor died", now) }, "killed/settled"},
		{"completed", "abandon", func(s *record.Session) error { return abandon(s, "x", now) }, ""},
		{"running", "requeued", func(s *record.Session) error { return requeued(s, sup, now, true) }, "running/turn"},
		{"between", "requeued", func(s *record.Session) error { return requeued(s, sup, now, true) }, ""},
		{"completed", "requeued", func(s *record.Session) error { return requeued(s, sup, now, true) }, ""},
		{"claimed", "failStart", func(s *record.Session) error { return failStart(s, "no binary", now) }, "failed/settled"},
		{"running", "failStart", func(s *record.Session) error { return failStart(s, "no binary", now) }, ""},

		{"running", "interrupt", func(s *record.Session) error { return interruptTurn(s, record.InterruptRequest{InboxID: "e2"}) }, "running/turn/interrupt"},
		{"interrupting", "interrupt", func(s *record.Session) error { return interruptTurn(s, record.InterruptRequest{InboxID: "e2"}) }, ""},
		{"stopping", "interrupt", func(s *record.Session) error { return interruptTurn(s, record.InterruptRequest{InboxID: "e2"}) }, ""},
		{"between", "interrupt", func(s *record.Session) error { return interruptTurn(s, record.InterruptRequest{InboxID: "e2"}) }, ""},
		{"claimed", "interrupt", func(s *record.Session) error { return interruptTurn(s, record.InterruptRequest{InboxID: "e2"}) }, ""},
		{"completed", "interrupt", func(s *record.Session) error { return interruptTurn(s, record.InterruptRequest{InboxID: "e2"}) }, ""},
		{"attached", "interrupt", func(s *record.Session) error { return interruptTurn(s, record.InterruptRequest{InboxID: "e2"}) }, ""},
		{"interrupting", "endTurn interrupted", func(s *record.Session) error {
			return endTurn(s, TurnEnd{ExitCode: &code143, Killed: true, Interrupted: true}, now)
		}, "running/between/interrupt"},
		{"interrupting", "handOver", func(s *record.Session) error { return handOver(s, turnStart{Prompt: "more"}, now) }, "running/turn"},
		{"interrupting for attach", "handOver", func(s *record.Session) error { return handOver(s, turnStart{Prompt: "more"}, now) }, ""},
		{"interrupting", "requestStop", func(s *record.Session) error { return requestStop(s, "killed by zwarm kill", now) }, "running/turn/stop/interrupt"},
		{"interrupting", "settle", func(s *record.Session) error { return settle(s, now) }, ""},

		{"completed", "attach", func(s *record.Session) error { return attach(s, *attacher, now) }, "attached/between"},
		{"failed", "attach", func(s *record.Session) error { return attach(s, *attacher, now) }, "attached/between"},
		{"running", "attach", func(s *record.Session) error { return attach(s, *attacher, now) }, ""},
		{"pending", "attach", func(s *record.Session) error { return attach(s, *attacher, now) }, ""},
		{"attached", "attach", func(s *record.Session) error { return attach(s, *attacher, now) }, ""},
		{"interrupted for attach", "handToAttacher", func(s *record.Session) error { return handToAttacher(s, now) }, "attached/between"},
		{"interrupting for attach", "handToAttacher", func(s *record.Session) error { return handToAttacher(s, now) }, ""},
		{"between", "handToAttacher", func(s *record.Session) error { return handToAttacher(s, now) }, ""},
		{"attached", "detach", func(s *record.Session) error { return detach(s, &code0, "", now) }, "completed/settled"},
		{"completed", "detach", func(s *record.Session) error { return detach(s, &code0, "", now) }, ""},
		{"running", "detach", func(s *record.Session) error { return detach(s, &code0, "", now) }, ""},
		{"attached", "startTurn", func(s *record.Session) error { return startTurn(s, turnStart{Prompt: "more"}, now) }, ""},
		{"attached", "reopen", func(s *record.Session) error { return reopen(s, sup) }, ""},
		{"attached", "settle", func(s *record.Session) error { return settle(s, now) }, ""},
		{"attached", "requestStop", func(s *record.Session) error { return requestStop(s, "killed by zwarm kill", now) }, ""},
		{"attached", "stopped", func(s *record.Session) error { return stopped(s, "", now) }, ""},
		{"attached", "abandon", func(s *record.Session) error { return abandon(s, "x", now) }, ""},
		{"attached", "failStart", func(s *record.Session) error { return failStart(s, "x", now) }, ""},
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
			if s.Status() == record.StatusAttached && (s.Owner == nil || s.Owner.Role != record.RoleAttach || s.Attaches[len(s.Attaches)-1].End != nil) {
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
	if err := endTurn(s, TurnEnd{ExitCode: &code}, now); err != nil {
		t.Fatal(err)
	}
	if s.Settled() || s.Status() != record.StatusRunning {
		t.Fatalf("between turns the session reads %s (settled %v)", s.Status(), s.Settled())
	}
	if err := startTurn(s, turnStart{Prompt: "next"}, now); err != nil {
		t.Fatal(err)
	}
	if s.Turns[0].Status() != record.StatusCompleted || s.Turns[1].Status() != record.StatusRunning || s.Turn != 2 {
		t.Fatalf("turns %+v", s.Turns)
	}
}

// How a turn ended decides its status and the reason shown.
func TestEndTurnOutcomes(t *testing.T) {
	now := time.Now()
	code := func(c int) *int { return &c }
	tests := []struct {
		name   string
		prep   func(*record.Turn)
		end    TurnEnd
		status record.Status
		reason string
	}{
		{"clean exit", nil, TurnEnd{ExitCode: code(0)}, record.StatusCompleted, ""},
		{"agent reported failure", func(t *record.Turn) { t.AgentFailed, t.Error = true, "model 500" }, TurnEnd{ExitCode: code(0)}, record.StatusFailed, "model 500"},
		{"exit 1 with an error event", func(t *record.Turn) { t.AgentError = "stream cut" }, TurnEnd{ExitCode: code(1)}, record.StatusFailed, "stream cut"},
		{"exit 1 with stderr", nil, TurnEnd{ExitCode: code(1), StderrTail: "Error: bad flag", Adapter: "codex"}, record.StatusFailed, "Error: bad flag"},
		{"exit 2, nothing said", nil, TurnEnd{ExitCode: code(2), Adapter: "codex"}, record.StatusFailed, "codex exited with code 2"},
		{"killed", nil, TurnEnd{ExitCode: code(143), Killed: true}, record.StatusKilled, "killed by zwarm kill"},
		{"disk full", nil, TurnEnd{ExitCode: code(143), Reason: "no space left on device"}, record.StatusFailed, "no space left on device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := state("running")
			if tc.prep != nil {
				tc.prep(&s.Turns[0])
			}
			if err := endTurn(s, tc.end, now); err != nil {
				t.Fatal(err)
			}
			if err := settle(s, now); err != nil {
				t.Fatal(err)
			}
			if s.Status() != tc.status || s.Turns[0].Status() != tc.status || s.Error != tc.reason {
				t.Fatalf("status %s (turn %s), error %q; want %s, %q", s.Status(), s.Turns[0].Status(), s.Error, tc.status, tc.reason)
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
	if err := endTurn(s, TurnEnd{ExitCode: &code, Killed: true, Interrupted: true}, now); err != nil {
		t.Fatal(err)
	}
	tr := s.Turns[0]
	if tr.Status() != record.StatusInterrupted || tr.Error != "" || len(tr.Notes) != 1 || tr.Notes[0] != "interrupted: a follow-up took over the thread" {
		t.Fatalf("turn %+v", tr)
	}
	// Nothing took over (the follow-up is not there): zwarm stopped it.
	if err := settle(s, now); err != nil {
		t.Fatal(err)
	}
	if s.Status() != record.StatusKilled || s.Interrupt != nil || s.Error == "" {
		t.Fatalf("settled as %s (%q), interrupt %v", s.Status(), s.Error, s.Interrupt)
	}

	s = state("interrupting")
	requestStop(s, "killed by zwarm kill", now)
	if err := endTurn(s, TurnEnd{ExitCode: &code, Killed: true, Interrupted: true}, now); err != nil {
		t.Fatal(err)
	}
	if s.Turns[0].Status() != record.StatusKilled {
		t.Fatalf("a kill during an interrupt: turn %s", s.Turns[0].Status())
	}
}

// A person who interrupted a turn to attach gets the session as a
// completed one: when they leave, it settles as completed, not as killed.
func TestAttachAfterInterruptSettlesCompleted(t *testing.T) {
	now := time.Now()
	s := state("interrupted for attach")
	if err := handToAttacher(s, now); err != nil {
		t.Fatal(err)
	}
	if s.Owner == nil || s.Owner.Token != attacher.Token || s.Interrupt != nil {
		t.Fatalf("owner %v interrupt %v", s.Owner, s.Interrupt)
	}
	code := 0
	if err := detach(s, &code, "", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	a := s.Attaches[0]
	if s.Status() != record.StatusCompleted || !s.Settled() || a.End == nil || a.End.Sub(a.Start) != time.Minute || *a.ExitCode != 0 {
		t.Fatalf("status %s settled %v span %+v", s.Status(), s.Settled(), a)
	}
	// A failed session a person attached to is failed again after.
	s = state("failed")
	s.Error = "tests fail"
	attach(s, *attacher, now)
	if s.Error != "" {
		t.Fatalf("attached, the error reads %q", s.Error)
	}
	detach(s, nil, "", now)
	if s.Status() != record.StatusFailed || s.Error != "tests fail" {
		t.Fatalf("after the attach: %s %q", s.Status(), s.Error)
	}
}

// The turn a requeue cut ends when it was last seen at work (its last
// event), not when the job's next run took over: its span counted the
// minutes the job waited in the queue. With no event of it, it ends when
// it began.
func TestARequeuedTurnEndsWhenItWasLastSeen(t *testing.T) {
	sup := proc.Ref{PID: 9, Start: 9, Role: record.RoleSupervisor}
	for _, c := range []struct {
		last time.Duration // after the turn began; <0 none in the turn
		want time.Duration
	}{{30 * time.Second, 30 * time.Second}, {-time.Minute, 0}} {
		s := state("running")
		began := s.Turns[0].StartedAt
		last := began.Add(c.last)
		s.LastEventAt = &last
		now := began.Add(3 * time.Minute)
		if err := requeued(s, sup, now, true); err != nil {
			t.Fatal(err)
		}
		tr := s.Turns[0]
		if tr.Status() != record.StatusInterrupted || tr.EndedAt == nil || !tr.EndedAt.Equal(began.Add(c.want)) {
			t.Fatalf("last event +%s: the cut turn ended %v, want +%s", c.last, tr.EndedAt, c.want)
		}
		if note := tr.Notes[len(tr.Notes)-1]; !strings.Contains(note, fmt.Sprintf("began %s later", 3*time.Minute-c.want)) {
			t.Fatalf("note %q", note)
		}
	}
}

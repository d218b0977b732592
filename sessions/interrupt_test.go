package sessions_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/state"
)

// blocks is a turn that takes the steps first (before anything a test
// waits for, so a signal cannot come before them), reports its thread and
// then works until the file never appears: only a stop ends it.
func blocks(t *testing.T, first ...map[string]any) []map[string]any {
	steps := append([]map[string]any{}, first...)
	steps = append(steps,
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`),
		fakeagent.Out(`{"type":"turn.started"}`),
	)
	return append(steps, map[string]any{"wait_file": filepath.Join(t.TempDir(), "never")})
}

// busy waits until the session's first turn runs and its thread is known.
func (w *world) busy(id string) {
	w.T.Helper()
	sessionstest.Eventually(w.T, "the turn to run with its thread known", func() bool {
		s, err := w.Manager.Get(context.Background(), id)
		return err == nil && s.TurnRunning() && s.ThreadID != "" && s.Agent != nil
	})
}

// An interrupt stops the running turn, records it interrupted (not failed
// or killed), and the thread goes on at once with the interrupt's message,
// before a follow-up queued earlier without one.
func TestInterruptStopsTheTurnAndContinuesTheThread(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		live bool
		stay bool // the agent ignores SIGTERM: force ends it after kill_grace
	}{{"resumed", false, false}, {"live agent", true, false}, {"ignores SIGTERM", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			var before []map[string]any
			if tc.stay {
				// First: the test interrupts once it sees the thread, and
				// SIGTERM must find the agent already ignoring it.
				before = append(before, map[string]any{"ignore_sigterm": true})
				// Long enough that a second interrupt comes while the
				// first one still waits for the agent to go, however
				// slow the machine: the agent goes only at SIGKILL.
				w.WriteConfig("kill_grace = \"15s\"\n")
			}
			w.SetScript(fakeagent.Script{Live: tc.live, Default: fakeagent.Completes("went on", 900),
				ByPrompt: map[string][]map[string]any{"the long way": blocks(t, before...)}})
			ctx := context.Background()
			s := w.spawn("the long way")
			w.busy(s.ID)
			if res, err := w.Manager.Inject(ctx, s.ID, "queued before"); err != nil || res.Outcome != sessions.InjectQueued {
				t.Fatalf("inject: %+v %v", res, err)
			}
			res, err := w.Manager.Interrupt(ctx, s.ID, "the short way")
			if err != nil || res.Outcome != sessions.InjectInterrupted || res.Turn != 1 || res.Ahead != 0 || res.Live {
				t.Fatalf("interrupt: %+v %v", res, err)
			}
			want := "the long way:interrupted,the short way:completed,queued before:completed"
			if tc.stay {
				// A second interrupt while the first one works queues
				// behind it, before what was queued without one.
				if again, err := w.Manager.Interrupt(ctx, s.ID, "and then this"); err != nil || again.Outcome != sessions.InjectQueued || again.Ahead != 1 {
					t.Fatalf("second interrupt: %+v %v; want it queued behind the first, one ahead of it", again, err)
				}
				want = "the long way:interrupted,the short way:completed,and then this:completed,queued before:completed"
			}
			got := w.wait(s.ID)
			var turns []string
			for _, tr := range got.Turns {
				turns = append(turns, tr.Prompt+":"+string(tr.Status()))
			}
			if strings.Join(turns, ",") != want || got.Status() != record.StatusCompleted {
				t.Fatalf("turns %q, session %s (%s); want %s", turns, got.Status(), got.Error, want)
			}
			first := got.Turns[0]
			if first.Error != "" || len(first.Notes) != 1 || !strings.Contains(first.Notes[0], "a follow-up took over") || first.EndedAt == nil {
				t.Fatalf("interrupted turn %+v", first)
			}
			if got.Interrupt != nil || !got.Turns[1].Resumed || got.Turns[1].Live {
				t.Fatalf("interrupt %+v, turn 2 %+v", got.Interrupt, got.Turns[1])
			}
			if p := w.Prompts(); strings.Join(p, ",") != strings.Join(promptsOf(got), ",") {
				t.Fatalf("the agent was given %q", p)
			}
		})
	}
}

// An interrupt of a session with no turn to stop is a follow-up.
func TestInterruptOfASettledSessionResumesIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	s := w.spawn("quick")
	w.wait(s.ID)
	res, err := w.Manager.Interrupt(ctx, s.ID, "more")
	if err != nil || res.Outcome != sessions.InjectResumed || res.Turn != 2 {
		t.Fatalf("interrupt: %+v %v", res, err)
	}
	if got := w.wait(s.ID); len(got.Turns) != 2 || got.Turns[1].Status() != record.StatusCompleted {
		t.Fatalf("turns %+v", got.Turns)
	}
}

// A person attaches to a settled session: the agent's CLI runs in its
// thread and dir; meanwhile the session is attached, follow-ups queue and
// kill refuses it; when the CLI exits the session settles as it was, the
// span is recorded, and the follow-up queued meanwhile runs in the thread.
func TestAttachRunsTheCLIThenTheQueuedFollowUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	s := w.spawn("first")
	s = w.wait(s.ID)
	thread := s.ThreadID
	w.SetScript(fakeagent.Script{Default: fakeagent.Completes("after the person", 800),
		ByPrompt: map[string][]map[string]any{thread: {fakeagent.Out("the person works here"), {"run": "echo by hand > person.txt"}}}})
	a, err := w.Manager.Attach(ctx, s.ID, sessions.AttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Session.Status() != record.StatusAttached || a.Session.Settled() || a.Command.Dir != w.Work {
		t.Fatalf("attached: %s settled %v dir %s", a.Session.Status(), a.Session.Settled(), a.Command.Dir)
	}
	if _, err := w.Manager.Attach(ctx, s.ID, sessions.AttachOptions{}); !errors.Is(err, sessions.ErrAttached) {
		t.Fatalf("a second attach: %v", err)
	}
	if _, err := w.Manager.Kill(ctx, s.ID); !errors.Is(err, sessions.ErrAttached) {
		t.Fatalf("kill of an attached session: %v", err)
	}
	res, err := w.Manager.Inject(ctx, s.ID, "then this")
	if err != nil || res.Outcome != sessions.InjectQueued || !res.Attached {
		t.Fatalf("inject while attached: %+v %v", res, err)
	}
	if got, _ := w.Manager.Get(ctx, s.ID); got.Status() != record.StatusAttached || got.PendingInjects != 1 || len(got.Turns) != 1 {
		t.Fatalf("while attached: %s, %d queued, %d turns", got.Status(), got.PendingInjects, len(got.Turns))
	}
	term, err := os.Create(filepath.Join(t.TempDir(), "terminal"))
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	devnull, _ := os.Open(os.DevNull)
	defer devnull.Close()
	after, err := a.Run(ctx, devnull, term, term)
	if err != nil {
		t.Fatal(err)
	}
	if shown, _ := os.ReadFile(term.Name()); !strings.Contains(string(shown), "the person works here") {
		t.Fatalf("the CLI printed %q", shown)
	}
	if b, err := os.ReadFile(filepath.Join(w.Work, "person.txt")); err != nil || string(b) != "by hand\n" {
		t.Fatalf("the CLI did not work in the session's dir: %q %v", b, err)
	}
	if after.Settled() || len(after.Attaches) != 1 {
		t.Fatalf("with a follow-up queued, the attach's end starts it: %s, spans %+v", after.Status(), after.Attaches)
	}
	got := w.wait(s.ID)
	sp := got.Attaches[0]
	if sp.End == nil || sp.ExitCode == nil || *sp.ExitCode != 0 || sp.Note != "" || sp.Was != record.StatusCompleted || sp.CLI == nil {
		t.Fatalf("span %+v", sp)
	}
	if len(got.Turns) != 2 || got.Turns[1].Prompt != "then this" || !got.Turns[1].Resumed || got.ThreadID != thread || got.Status() != record.StatusCompleted {
		t.Fatalf("after the attach: %s, turns %+v", got.Status(), got.Turns)
	}
	// The CLI resumed the thread: its prompt (the fake's) is the thread.
	if p := w.Prompts(); strings.Join(p, ",") != "first,"+thread+",then this" {
		t.Fatalf("the agent was given %q", p)
	}
}

// A running session is refused, unless the attach interrupts its turn:
// then the turn is recorded interrupted and the session is handed to the
// person as it ends, before any queued follow-up.
func TestAttachToARunningSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	w.SetScript(fakeagent.Script{Default: fakeagent.Completes("done", 700), ByPrompt: map[string][]map[string]any{"long": blocks(t)}})
	s := w.spawn("long")
	w.busy(s.ID)
	_, err := w.Manager.Attach(ctx, s.ID, sessions.AttachOptions{})
	if !errors.Is(err, sessions.ErrRunning) || !strings.Contains(err.Error(), "still running: wait, or attach --interrupt to stop its turn first") {
		t.Fatalf("attach to a running session: %v", err)
	}
	if _, err := w.Manager.Inject(ctx, s.ID, "queued"); err != nil {
		t.Fatal(err)
	}
	waited := 0
	a, err := w.Manager.Attach(ctx, s.ID, sessions.AttachOptions{Interrupt: true, Waiting: func(n int) { waited = n }})
	if err != nil {
		t.Fatal(err)
	}
	got := a.Session
	if waited != 1 || got.Status() != record.StatusAttached || got.Turns[0].Status() != record.StatusInterrupted || len(got.Turns) != 1 || got.PendingInjects != 1 {
		t.Fatalf("waited for turn %d; %s, turns %+v, %d queued", waited, got.Status(), got.Turns, got.PendingInjects)
	}
	if !strings.Contains(got.Turns[0].Notes[0], "a person took over") {
		t.Fatalf("notes %q", got.Turns[0].Notes)
	}
	// The stopped agent's exit is not the session's: it would read
	// "completed (exit 143)" once the person leaves.
	if got.ExitCode != nil || got.Turns[0].ExitCode == nil {
		t.Fatalf("session exit %v, the interrupted turn's %v", got.ExitCode, got.Turns[0].ExitCode)
	}
	after, err := a.Release(ctx, "not run in this test")
	if err != nil {
		t.Fatal(err)
	}
	if after.Attaches[0].Was != record.StatusCompleted || after.Attaches[0].Note != "not run in this test" {
		t.Fatalf("span %+v", after.Attaches[0])
	}
	if got := w.wait(s.ID); got.Status() != record.StatusCompleted || len(got.Turns) != 2 || got.Turns[1].Prompt != "queued" {
		t.Fatalf("after: %s turns %+v", got.Status(), got.Turns)
	}
}

// An attach whose command died is settled again by the next reader, with
// a note; follow-ups queued meanwhile are reported undelivered, since
// nobody is left to start them.
func TestAttachOfADeadCommandSettles(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	s := attachedSession(t, w)
	if _, err := w.Manager.Inject(ctx, s.ID, "queued"); err != nil {
		t.Fatal(err)
	}
	attacherDied(t, w, s.ID)
	got, err := w.Manager.Get(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	sp := got.Attaches[0]
	if got.Status() != record.StatusCompleted || !got.Settled() || sp.End == nil || !strings.Contains(sp.Note, "died without settling the session") {
		t.Fatalf("status %s settled %v span %+v", got.Status(), got.Settled(), sp)
	}
	inbox, _ := w.Manager.Inbox(s.ID)
	if len(inbox) != 1 || inbox[0].State != record.InboxUndelivered || got.PendingInjects != 0 {
		t.Fatalf("inbox %+v, pending %d", inbox, got.PendingInjects)
	}
}

// attachedSession is a settled session a person is attached to (this
// process, through Manager.Attach).
func attachedSession(t *testing.T, w *world) *record.Session {
	t.Helper()
	s := w.spawn("first")
	w.wait(s.ID)
	if _, err := w.Manager.Attach(context.Background(), s.ID, sessions.AttachOptions{}); err != nil {
		t.Fatal(err)
	}
	return s
}

// attacherDied records a dead process as the attacher of session id, as
// if the zwarm attach had been killed.
func attacherDied(t *testing.T, w *world, id string) *proc.Ref {
	t.Helper()
	dead := deadProc(t)
	dead.Role, dead.Token = record.RoleAttach, "gone"
	if _, err := w.Store.Update(id, func(tx *state.Tx) error { s := tx.Session(); s.Owner = dead; return nil }); err != nil {
		t.Fatal(err)
	}
	return dead
}

// deadProc is a process that has exited.
func deadProc(t *testing.T) *proc.Ref {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := proc.RefOf(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	return ref
}

func promptsOf(s *record.Session) []string {
	var out []string
	for _, t := range s.Turns {
		out = append(out, t.Prompt)
	}
	return out
}

// A reader that finds an attached session's attacher dead while another
// process holds the session's lock reports it settled as it was, in the
// words the record will have, without recording it: never failed, never
// still attached.
func TestDeadAttacherSeenWhileLockedReadsSettled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	s := attachedSession(t, w)
	dead := attacherDied(t, w, s.ID)
	l, err := state.LockFileCtx(ctx, w.Store.Dir(), w.Store.LockPath(s.ID))
	if err != nil {
		t.Fatal(err)
	}
	got, err := w.Manager.Get(ctx, s.ID)
	l.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Attaches) != 1 {
		t.Fatalf("want the one attach span, got %d", len(got.Attaches))
	}
	sp := got.Attaches[0]
	if got.Status() != record.StatusCompleted || !got.Settled() || sp.End == nil || sp.Note != fmt.Sprintf("zwarm attach (pid %d) died without settling the session", dead.PID) {
		t.Fatalf("read while locked: want completed, settled, the span ended saying the attacher died; got %s (settled %v, error %q), span ended %v, note %q",
			got.Status(), got.Settled(), got.Error, sp.End != nil, sp.Note)
	}
	// Nothing was recorded: the next reader, with the lock free, does it.
	if rec, err := w.Store.Load(s.ID); err != nil || rec.Status() != record.StatusAttached {
		t.Fatalf("the record after a read under someone's lock: want it still attached, got %v %v", rec.Status(), err)
	}
}

// An interrupt is carried out by the supervisor that runs the session: no
// second one starts. A second would wait for the first's lock, give up
// after its hand-over wait, fail to claim the running session and, on its
// way out, take down the cgroup the follow-up's agent runs in.
func TestInterruptLeavesOneSupervisor(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.SetScript(fakeagent.Script{Default: fakeagent.Completes("went on", 900), ByPrompt: map[string][]map[string]any{
		"the long way": blocks(t), "longer still": blocks(t)}})
	ctx := context.Background()
	s := w.spawn("the long way")
	w.busy(s.ID)
	first := supervisorPIDs(s.ID)
	if len(first) != 1 {
		t.Fatalf("supervisors of the running session: %v; want one", first)
	}
	if res, err := w.Manager.Interrupt(ctx, s.ID, "longer still"); err != nil || res.Outcome != sessions.InjectInterrupted {
		t.Fatalf("interrupt: %+v %v", res, err)
	}
	sessionstest.Eventually(t, "the follow-up to run as turn 2", func() bool {
		got, err := w.Manager.Get(ctx, s.ID)
		return err == nil && len(got.Turns) == 2 && got.TurnRunning() && got.Agent != nil
	})
	if now := supervisorPIDs(s.ID); fmt.Sprint(now) != fmt.Sprint(first) {
		t.Fatalf("supervisors while the follow-up runs: %v; want only the one that ran turn 1, %v", now, first)
	}
	// A follow-up that runs longer than a second supervisor would have
	// waited for the first's lock runs on: nothing gave up waiting and
	// took its cgroup down.
	time.Sleep(handoverWaitOfSupervisor + 2*time.Second)
	if got, err := w.Manager.Get(ctx, s.ID); err != nil || len(got.Turns) != 2 || !got.TurnRunning() || got.Status() != record.StatusRunning {
		t.Fatalf("the follow-up after the hand-over wait: %+v %v", got, err)
	}
	if _, err := w.Manager.Kill(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	got := w.wait(s.ID)
	if len(got.Turns) != 2 || got.Turns[0].Status() != record.StatusInterrupted || got.Status() != record.StatusKilled {
		t.Fatalf("session %s (%s), turns %+v", got.Status(), got.Error, got.Turns)
	}
}

// handoverWaitOfSupervisor is sessions/supervisor's handoverWait: how long
// a new supervisor waits for the previous one's lock before it goes ahead.
const handoverWaitOfSupervisor = 30 * time.Second

// supervisorPIDs lists the live processes that supervise the session: the
// test binary run as `__supervise ... ID` (not the --detach starter, which
// exits once it has started one).
func supervisorPIDs(id string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if err != nil || !slices.Contains(args, "__supervise") || !slices.Contains(args, id) || slices.Contains(args, "--detach") {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(st), ')'); err == nil && i > 0 && i+2 < len(st) && st[i+2] != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

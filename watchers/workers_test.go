package watchers

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/watch"
)

// worldClock is the time the scripted histories start at.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rec is a session record at some point of its life.
type rec struct{ s *record.Session }

func newRec(id string) *rec {
	owner := proc.Ref{PID: 42, Start: 1, Role: "supervisor"}
	return &rec{new(sessionstest.WithStatus(record.Session{ID: id, Task: "task " + id, CreatedAt: t0, UpdatedAt: t0,
		Source: record.UserSource, Owner: &owner}, record.StatusPending))}
}

// startTurn starts a turn at at.
func (r *rec) startTurn(at time.Time) *rec {
	sessionstest.SetStatus(r.s, record.StatusRunning)
	r.s.Turns = append(r.s.Turns, sessionstest.WithStatus(record.Turn{N: len(r.s.Turns) + 1, StartedAt: at}, record.StatusRunning))
	r.s.UpdatedAt = at
	return r
}

// printed says the agent printed an event at at.
func (r *rec) printed(at time.Time) *rec {
	r.s.LastEventAt = &at
	r.s.UpdatedAt = at
	return r
}

// settle ends the turn and the session with status, message and error.
func (r *rec) settle(at time.Time, status record.Status, msg, errText string) *rec {
	t := &r.s.Turns[len(r.s.Turns)-1]
	sessionstest.SetStatus(t, status)
	t.EndedAt, t.LastMessage, t.Error = &at, msg, errText
	sessionstest.SetStatus(r.s, status)
	r.s.Owner, r.s.EndedAt, r.s.Error, r.s.LastMessage = nil, &at, errText, msg
	if status == record.StatusFailed {
		code := 1
		r.s.ExitCode = &code
	}
	return r
}

// update is the subscription's update of the record as it is now.
func (r *rec) update(initial bool, evs ...record.Event) watch.Update {
	u := watch.Update{ID: r.s.ID, Session: r.s.Clone(), Initial: initial}
	if len(evs) > 0 {
		u.Events = []watch.TurnEvents{{Turn: r.s.Turns[len(r.s.Turns)-1], Events: evs}}
	}
	return u
}

func synced() watch.Update { return watch.Update{Synced: true} }

func feed(t *testing.T, w *Workers, at time.Time, u watch.Update) []Alert {
	t.Helper()
	return w.handle(context.Background(), u, at)
}

func want(t *testing.T, got []Alert, watchers ...string) {
	t.Helper()
	var names []string
	for _, a := range got {
		names = append(names, a.Watcher)
	}
	if strings.Join(names, ",") != strings.Join(watchers, ",") {
		t.Fatalf("alerts %v, want %v: %+v", names, watchers, got)
	}
}

func stallCfg() *Config {
	c := DefaultConfig()
	c.Stall.After.Duration, c.Stall.FirstEvent.Duration = 10*time.Minute, time.Minute
	return c
}

func TestStallNoFirstEvent(t *testing.T) {
	w := NewWorkers(stallCfg(), WorkerOptions{})
	r := newRec("a").startTurn(t0)
	want(t, feed(t, w, t0, r.update(true)))
	want(t, feed(t, w, t0, synced()))
	if due := w.next(); !due.Equal(t0.Add(time.Minute)) {
		t.Fatalf("next stall due %v", due)
	}
	want(t, w.tick(t0.Add(59*time.Second)))
	got := w.tick(t0.Add(61 * time.Second))
	want(t, got, "stall")
	if a := got[0]; a.SessionID != "a" || a.Action != Nudge || a.Reason != "no first event 1m01s after its turn started (first_event is 1m00s)" ||
		a.Status != record.StatusRunning || a.Task != "task a" {
		t.Errorf("alert %+v", a)
	}
	want(t, w.tick(t0.Add(5*time.Minute))) // once per silence
	if !w.next().IsZero() {
		t.Error("a reported silence is not due again")
	}
	if len(w.Standing()["a"]) != 1 {
		t.Errorf("standing %v", w.Standing())
	}
	// It speaks: the stall no longer stands, and a new silence starts.
	at := t0.Add(6 * time.Minute)
	want(t, feed(t, w, at, r.printed(at).update(false, record.Event{Type: record.EventReasoning, Text: "thinking"})))
	if len(w.Standing()) != 0 {
		t.Errorf("standing %v", w.Standing())
	}
	if due := w.next(); !due.Equal(at.Add(10 * time.Minute)) {
		t.Fatalf("next stall due %v", due)
	}
	got = w.tick(at.Add(10*time.Minute + time.Second))
	want(t, got, "stall")
	if !strings.HasPrefix(got[0].Reason, "no event for 10m01s (after is 10m00s); the last was at 12:06:00 UTC") {
		t.Errorf("reason %q", got[0].Reason)
	}
}

func TestStallQuietWhileItSpeaks(t *testing.T) {
	w := NewWorkers(stallCfg(), WorkerOptions{})
	r := newRec("a")
	want(t, feed(t, w, t0, synced()))
	want(t, feed(t, w, t0, r.update(true))) // pending, appeared after the start
	r.startTurn(t0.Add(time.Second))
	want(t, feed(t, w, t0.Add(time.Second), r.update(false)))
	want(t, w.tick(t0.Add(50*time.Second)))
	want(t, feed(t, w, t0.Add(55*time.Second), r.update(false, record.Event{Type: record.EventTurnStarted})))
	// An event every 9 minutes for an hour, some seen only through the
	// events of an update (the record's LastEventAt lags behind them).
	for i := 1; i <= 7; i++ {
		at := t0.Add(time.Duration(i) * 9 * time.Minute)
		want(t, w.tick(at.Add(-time.Second)))
		u := r.update(false, record.Event{Type: record.EventCommand, Command: "ls"})
		if i%2 == 0 {
			u = r.printed(at).update(false)
		}
		want(t, feed(t, w, at, u))
	}
	// Settled: never stalled, however long after.
	end := t0.Add(64 * time.Minute)
	want(t, feed(t, w, end, r.settle(end, record.StatusCompleted, "done", "").update(false)))
	if !w.next().IsZero() {
		t.Error("a settled session has no stall due")
	}
	want(t, w.tick(end.Add(time.Hour)))
}

func TestStalledFromTheRecord(t *testing.T) {
	c := stallCfg().Stall
	r := newRec("a").startTurn(t0)
	if why, ok := c.Stalled(r.s, t0.Add(30*time.Second)); ok {
		t.Errorf("stalled at 30s: %s", why)
	}
	if why, ok := c.Stalled(r.s, t0.Add(2*time.Minute)); !ok || !strings.HasPrefix(why, "no first event 2m00s") {
		t.Errorf("at 2m: %q %v", why, ok)
	}
	r.printed(t0.Add(time.Minute))
	if _, ok := c.Stalled(r.s, t0.Add(10*time.Minute)); ok {
		t.Error("stalled 9m after an event")
	}
	if why, ok := c.Stalled(r.s, t0.Add(12*time.Minute)); !ok || !strings.HasPrefix(why, "no event for 11m00s") {
		t.Errorf("at 12m: %q %v", why, ok)
	}
	c.Enabled = false
	if _, ok := c.Stalled(r.s, t0.Add(12*time.Minute)); ok {
		t.Error("a disabled watcher finds a stall")
	}
	c.Enabled = true
	r.settle(t0.Add(13*time.Minute), record.StatusCompleted, "ok", "")
	if _, ok := c.Stalled(r.s, t0.Add(time.Hour)); ok {
		t.Error("a settled session is stalled")
	}
	// A person works in its CLI for an hour: nothing of zwarm's is silent.
	sessionstest.SetStatus(r.s, record.StatusAttached)
	r.s.Owner = &proc.Ref{PID: 44}
	if why, ok := c.Stalled(r.s, t0.Add(2*time.Hour)); ok {
		t.Errorf("an attached session is stalled: %s", why)
	}
}

func TestFailureReportedWithItsError(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	r := newRec("a").startTurn(t0)
	want(t, feed(t, w, t0, r.update(true)))
	want(t, feed(t, w, t0, synced()))
	at := t0.Add(time.Minute)
	got := feed(t, w, at, r.settle(at, record.StatusFailed, "", `stream error: {"error":{"message":"model not found"}}`).update(false))
	want(t, got, "failure")
	if got[0].Reason != "failed (exit 1): stream error: model not found" || got[0].Status != record.StatusFailed {
		t.Errorf("alert %+v", got[0])
	}
	want(t, feed(t, w, at, r.update(false))) // once
	// A follow-up reopens it: the failure no longer stands.
	r.s.Owner = &proc.Ref{PID: 43}
	r.startTurn(at.Add(time.Second))
	want(t, feed(t, w, at.Add(time.Second), r.update(false)))
	if len(w.Standing()) != 0 {
		t.Errorf("standing %v", w.Standing())
	}
	// Killed counts too, unless killed = false.
	k := newRec("k").startTurn(t0)
	want(t, feed(t, w, t0, k.update(true)))
	want(t, feed(t, w, at, k.settle(at, record.StatusKilled, "", "killed by zwarm kill").update(false)), "failure")
}

// The error is the agent's as it wrote it: printers make it safe, and
// zwarm watch --json has it byte for byte.
func TestFailureReasonIsTheErrorAsWritten(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	r := newRec("b").startTurn(t0)
	want(t, feed(t, w, t0, r.update(true)))
	want(t, feed(t, w, t0, synced()))
	at := t0.Add(time.Minute)
	got := feed(t, w, at, r.settle(at, record.StatusFailed, "", "boom \x1b[2J\a failed").update(false))
	if want(t, got, "failure"); got[0].Reason != "failed (exit 1): boom \x1b[2J\a failed" {
		t.Errorf("reason %q", got[0].Reason)
	}
}

func TestFailureQuiet(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Failure.Killed = false
	w := NewWorkers(cfg, WorkerOptions{})
	// Failed before the watchers started: history, the last of the
	// initial state (marked Synced) too.
	old := newRec("old").startTurn(t0).settle(t0, record.StatusFailed, "", "boom")
	want(t, feed(t, w, t0, old.update(true)))
	last := newRec("last").startTurn(t0).settle(t0, record.StatusFailed, "", "boom").update(true)
	last.Synced = true
	want(t, feed(t, w, t0, last))
	r := newRec("a").startTurn(t0)
	want(t, feed(t, w, t0, r.update(false)))
	want(t, feed(t, w, t0, r.settle(t0, record.StatusCompleted, "all done", "").update(false)))
	k := newRec("k").startTurn(t0)
	want(t, feed(t, w, t0, k.update(false)))
	want(t, feed(t, w, t0, k.settle(t0, record.StatusKilled, "", "killed by zwarm kill").update(false)))
}

func TestFailureOfASessionThatFailedBeforeItWasSeen(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	want(t, feed(t, w, t0, synced()))
	// It appeared after the start, already failed: news.
	r := newRec("fast").startTurn(t0).settle(t0, record.StatusFailed, "", "bad flag")
	want(t, feed(t, w, t0, r.update(true)), "failure")
}

func TestHollowCompletion(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	want(t, feed(t, w, t0, synced()))
	r := newRec("a").startTurn(t0)
	want(t, feed(t, w, t0, r.update(true, record.Event{Type: record.EventReasoning, Text: "hmm"}, record.Event{Type: record.EventCommand, Command: "ls"})))
	got := feed(t, w, t0, r.settle(t0, record.StatusCompleted, "", "").update(false))
	want(t, got, "hollow")
	if got[0].Reason != "turn 1 completed with no message and no file change" {
		t.Errorf("reason %q", got[0].Reason)
	}
}

func TestHollowQuietWhenItSaidOrChangedSomething(t *testing.T) {
	w := NewWorkers(nil, WorkerOptions{})
	want(t, feed(t, w, t0, synced()))
	said := newRec("said").startTurn(t0)
	want(t, feed(t, w, t0, said.update(true)))
	want(t, feed(t, w, t0, said.settle(t0, record.StatusCompleted, "done: 3 files", "").update(false)))
	changed := newRec("changed").startTurn(t0)
	want(t, feed(t, w, t0, changed.update(true, record.Event{Type: record.EventFileChange, Changes: []record.FileChange{{Path: "a.go", Kind: "add"}}})))
	want(t, feed(t, w, t0, changed.update(false, record.Event{Type: record.EventFileChange, Changes: []record.FileChange{{Path: "a.go", Kind: "update"}, {Path: "b.go", Kind: "add"}}})))
	want(t, feed(t, w, t0, changed.settle(t0, record.StatusCompleted, "", "").update(false)))
	if ch := w.Changes()["changed"]; len(ch) != 2 || ch[0] != (record.FileChange{Path: "a.go", Kind: "update"}) || ch[1].Path != "b.go" {
		t.Errorf("changes %+v", ch)
	}
}

// killer records the kills asked of it.
type killer struct {
	mu      sync.Mutex
	reasons map[string]string
}

func (k *killer) KillBecause(_ context.Context, id, reason string) (*record.Session, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reasons[id] = reason
	return new(sessionstest.WithStatus(record.Session{ID: id}, record.StatusKilled)), nil
}

func TestCostGuardStopsAWorkerPastItsCap(t *testing.T) {
	cfg := DefaultConfig()
	cfg.CostGuard.MaxTokens = 10_000
	k := &killer{reasons: map[string]string{}}
	w := NewWorkers(cfg, WorkerOptions{Killer: k})
	r := newRec("a").startTurn(t0)
	want(t, feed(t, w, t0, r.update(true)))
	r.s.Usage.TotalTokens = 9_000
	want(t, feed(t, w, t0, r.update(false)))
	r.s.Usage.TotalTokens = 12_000
	want(t, feed(t, w, t0, r.update(false))) // the alert comes once stopped
	w.wg.Wait()
	a := <-w.Alerts()
	if a.Watcher != "cost_guard" || a.Action != Stop || a.SessionID != "a" || a.Reason != "stopped: it used 12k tokens, its cap is 10k (cost_guard max_tokens)" {
		t.Errorf("alert %+v", a)
	}
	if k.reasons["a"] != "stopped by watcher cost_guard: it used 12k tokens, its cap is 10k (cost_guard max_tokens)" {
		t.Errorf("kill reason %q", k.reasons["a"])
	}
	// Its end as killed is what cost_guard did, not a failure to report.
	want(t, feed(t, w, t0, r.settle(t0, record.StatusKilled, "", k.reasons["a"]).update(false)))
}

func TestCostGuardQuietUnderItsCap(t *testing.T) {
	cfg := DefaultConfig()
	cfg.CostGuard.MaxCost = 1
	k := &killer{reasons: map[string]string{}}
	w := NewWorkers(cfg, WorkerOptions{Killer: k})
	r := newRec("a").startTurn(t0)
	cost := 0.99
	r.s.CostUSD = &cost
	r.s.Usage.TotalTokens = 50_000_000 // no token cap
	want(t, feed(t, w, t0, r.update(true)))
	// Past the cap but settled: nothing left to stop.
	cost = 3
	want(t, feed(t, w, t0, r.settle(t0, record.StatusCompleted, "done", "").update(false)))
	w.wg.Wait()
	if len(k.reasons) != 0 || len(w.Alerts()) != 0 {
		t.Errorf("kills %v", k.reasons)
	}
}

// A worker waiting in its cluster's queue is not stalled, however long it
// waits: nothing of it runs. Its silence counts from its job's start. On
// this host a session that never starts is.
func TestAQueuedJobIsNotStalled(t *testing.T) {
	c := stallCfg().Stall
	r := newRec("a")
	sessionstest.SetStatus(r.s, record.StatusPending)
	r.s.Owner, r.s.Job = nil, &record.Job{Runner: "slurm", ID: "51"}
	if why, ok := c.Stalled(r.s, t0.Add(2*time.Hour)); ok {
		t.Errorf("a job queued for two hours is stalled: %s", why)
	}
	local := newRec("b")
	sessionstest.SetStatus(local.s, record.StatusPending)
	local.s.Owner = nil
	if _, ok := c.Stalled(local.s, t0.Add(2*time.Hour)); !ok {
		t.Error("a session of this host pending for two hours is not stalled")
	}
	// The job starts after two hours in the queue: its first event is
	// due a FirstEvent after that, not at once.
	began := t0.Add(2 * time.Hour)
	sessionstest.SetStatus(r.s, record.StatusRunning)
	r.s.Owner = &proc.Ref{PID: 44}
	r.startTurn(began)
	if why, ok := c.Stalled(r.s, began.Add(30*time.Second)); ok {
		t.Errorf("30 s after its job started, after two hours queued: %s", why)
	}
	if why, ok := c.Stalled(r.s, began.Add(2*time.Minute)); !ok || !strings.HasPrefix(why, "no first event 2m00s") {
		t.Errorf("2 m after its job started: %q %v", why, ok)
	}
	// Preempted mid-turn, its job back in the queue (as a reader found
	// it): silent, and not stalled, until the job runs again.
	r.s.JobQueued = true
	if why, ok := c.Stalled(r.s, began.Add(time.Hour)); ok {
		t.Errorf("a requeued job's session is stalled: %s", why)
	}
}

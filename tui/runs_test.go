package tui

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/proc"
)

// The screen with a run at both sizes: its row, its workers under it, the
// person's sessions beside, and its steps in the detail pane.
func TestRunScreenGoldens(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := orchestrated(t).newModel(size[0], size[1])
			golden.RequireEqual(t, []byte(m.View()))
		})
	}
}

func TestRunRowHasItsWorkersUnderIt(t *testing.T) {
	m := orchestrated(t).newModel(160, 48)
	list := m.list.View()
	order(t, list, "run:7c1e0000 ● running · step 2/10", "gpt-5.1", "$0.03", "add rate limiting",
		"├ 3f2a0012", "✓ completed", "└ 3f2a0011", "● running", "3f2a0004", "3f2a0005")
	// The run is newest: the first row, selected, its steps shown.
	if m.detail.Run() != runID {
		t.Fatalf("selected %q", m.detail.ID())
	}
	// The header counts the run, and its model's cost joins the sessions'.
	if h := strings.Split(m.View(), "\n")[0]; !strings.Contains(h, "runs: ● 1 running  sessions: ● 2 running") || !strings.Contains(h, "$0.05") {
		t.Fatalf("header %q", h)
	}
	// A session whose run is unknown stays a row of its own.
	if !strings.Contains(list, "*3f2a0004     ✓ completed") || !strings.Contains(list, "run:9c1d2e3f") {
		t.Fatalf("list:\n%s", list)
	}
}

// Selecting a run shows its steps as zwarm orchestrate prints them, and
// steps appended to events.jsonl appear as they are written.
func TestRunStepsAppearLive(t *testing.T) {
	f := orchestrated(t)
	m := f.newModel(120, 40)
	order(t, m.detail.View(), "── run:7c1e0000 ● running · step 2/10", "run 7c1e0000 · gpt-5.1 · up to 10 steps · /w",
		"task: add rate limiting", "step 1/10 · $0.01 (model $0.01, workers $0.00)", "· Two pieces",
		`→ delegate task="Add a token-bucket rate limiter" model="gpt-5.1-codex"`, "← started 3f2a0011 (codex, gpt-5.1-codex)",
		"step 2/10", "» Both are running", `→ wait mode="all" timeout_s=900`, "· worker 3f2a0012 completed",
		"← finished: 3f2a0012 completed · 1 running · timed out", "… step 3/10 · the model is thinking")
	f.appendEvents(runID,
		runs.Event{Type: runs.EventModelResponse, Step: 3, Text: "Checking the limiter."},
		runs.Event{Type: runs.EventUsage, Step: 3, Totals: &runs.Totals{CostUSD: money(0.03), WorkerCostUSD: money(0.01)}},
		runs.Event{Type: runs.EventToolCall, Step: 3, Tool: "check_session", Args: args(map[string]string{"session_id": workerOne})})
	m = settle(t, m, func(m Model) bool { return strings.Contains(m.detail.View(), "→ check_session session_id=3f2a0011") })
	v := m.detail.View()
	order(t, v, "step 3/10 · $0.04", "» Checking the limiter.", "→ check_session")
	if strings.Contains(v, "the model is thinking") {
		t.Fatalf("still thinking after the answer:\n%s", v)
	}
	// The run ends: its outcome and summary close the story, its row says so.
	// A summary of several lines shows them as lines (it showed "\n").
	summary := "Rate limiting is in.\n\nLanded: none."
	f.appendEvents(runID, runs.Event{Type: runs.EventStopped, Step: 3, RunStatus: runs.StatusCompleted,
		Reason: "the model called finish", Summary: summary})
	f.rewriteRun(runID, func(r *runs.Record) {
		end := clock
		r.Status, r.Steps, r.Owner, r.EndedAt, r.Summary = runs.StatusCompleted, 3, nil, &end, summary
	})
	// The record and the events are two files: each arrives on its own.
	m = settle(t, m, func(m Model) bool {
		return strings.Contains(m.View(), "✓ completed · step 3/10") && strings.Contains(m.detail.View(), "Rate limiting is in.")
	})
	order(t, m.detail.View(), "completed after 3 steps: the model called finish", "» Rate limiting is in.", "\n    Landed: none.")
	if strings.Contains(m.detail.View(), `\n`) {
		t.Fatalf("the summary's breaks escaped:\n%s", m.detail.View())
	}
}

// A run whose process dies without a word reads interrupted, with no tick:
// its owner's pidfd says so.
func TestRunWhoseProcessDiedReadsInterrupted(t *testing.T) {
	f := newFixture(t)
	owner := exec.Command("sleep", "60")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer owner.Wait()
	ref, err := proc.RefOf(owner.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	f.addRun(runID, runs.StatusRunning, "doomed", time.Minute, 1, nil, func(r *runs.Record) { r.Owner = ref })
	m := f.newModel(100, 30)
	if !strings.Contains(m.list.View(), "● running · step 1/10") {
		t.Fatalf("not running at first:\n%s", m.View())
	}
	owner.Process.Kill()
	m = settle(t, m, func(m Model) bool { return strings.Contains(m.list.View(), "‖ interrupted · step 1/10") })
	if !strings.Contains(m.View(), "!run:7c1e0000") {
		t.Fatalf("an interrupted run is not marked:\n%s", m.View())
	}
}

// Keys that act on sessions say what to do on a run instead.
func TestSessionKeysOnARunSayWhatToDo(t *testing.T) {
	m, rec := orchestrated(t).recorded(120, 40)
	for k, want := range map[string]string{
		"x": "is stopped with Ctrl+C where it runs",
		"d": "runs are kept in the state dir",
	} {
		m = press(t, m, k)
		if !strings.Contains(m.View(), want) || m.prompt.Active() {
			t.Errorf("%s on a run:\n%s", k, m.View())
		}
	}
	if len(rec.killed)+len(rec.injected) != 0 {
		t.Fatalf("acted on a run: %v %v", rec.killed, rec.injected)
	}
	// Its workers are sessions like any other.
	m = press(t, m, "j", "j", "x")
	if !strings.Contains(m.View(), "kill 3f2a0011 and every process it started?") {
		t.Fatalf("x on a worker:\n%s", m.View())
	}
}

// The filter keeps a run for its matching workers, and a matching run
// keeps its workers; hiding finished rows keeps a running run.
func TestFilterAndHideFinishedWithRuns(t *testing.T) {
	m := orchestrated(t).newModel(160, 48)
	m = press(t, m, "/", "w", "r", "i", "t", "e", "enter")
	if v := m.list.View(); !strings.Contains(v, "run:7c1e0000") || !strings.Contains(v, "└ 3f2a0012") || strings.Contains(v, "3f2a0011") ||
		!strings.Contains(v, "rewrite the docs") {
		t.Fatalf("filter on a worker's task:\n%s", v)
	}
	m = press(t, m, "/", "backspace", "backspace", "backspace", "backspace", "backspace", "r", "a", "t", "e", " ", "l", "i", "m", "enter")
	if v := m.list.View(); !strings.Contains(v, "├ 3f2a0012") || !strings.Contains(v, "└ 3f2a0011") || strings.Contains(v, "bump dependencies") {
		t.Fatalf("filter on the run's task:\n%s", v)
	}
	m = press(t, m, "/", "esc")
	m = press(t, m, "/")
	for range 8 {
		m = press(t, m, "backspace")
	}
	m = press(t, m, "enter", "a")
	if v := m.list.View(); !strings.Contains(v, "run:7c1e0000") || !strings.Contains(v, "└ 3f2a0011") || strings.Contains(v, "3f2a0012") {
		t.Fatalf("hiding finished:\n%s", v)
	}
}

// A running run keeps the clock going; finished runs leave it asleep.
func TestClockTicksWhileARunRuns(t *testing.T) {
	f := newFixture(t)
	f.addRun(runID, runs.StatusCompleted, "done", time.Hour, 4, nil)
	if m := f.startTicking(time.Second); m.ticking {
		t.Fatal("ticking with only a finished run")
	}
	f = newFixture(t)
	f.addRun(runID, runs.StatusRunning, "busy", time.Minute, 1, nil)
	if m := f.startTicking(time.Second); !m.ticking {
		t.Fatal("not ticking while a run runs")
	}
}

// i on a run gives its model a message; on a run that asks, it answers
// the question (a number picks an option), as zwarm runs say and zwarm runs
// answer do. A run that asks comes first, marked, its question in view.
func TestIOnARunSaysOrAnswers(t *testing.T) {
	f := orchestrated(t)
	m := f.newModel(120, 40)
	m = press(t, m, "i")
	if !m.prompt.Active() || !strings.Contains(m.View(), "message to run 7c1e0000: ") {
		t.Fatalf("i on a running run:\n%s", m.View())
	}
	m = press(t, m, "u", "s", "e", " ", "p", "k", "g", "enter")
	m = settle(t, m, func(m Model) bool { return strings.Contains(m.View(), "message 1 sent to run 7c1e0000") })
	dir := runs.RunDir(f.dir, runID)
	if in, err := runs.ReadInbox(dir); err != nil || len(in) != 1 || in[0].Kind != runs.MessageSay || in[0].Text != "use pkg" {
		t.Fatalf("inbox after i: %+v %v", in, err)
	}
	f.rewriteRun(runID, func(r *runs.Record) {
		r.Status = runs.StatusWaiting
		r.Question = &runs.Question{ID: "q1", Text: "Which database?", Options: []string{"postgres", "sqlite"}, AskedAt: clock}
	})
	m = settle(t, m, func(m Model) bool {
		return strings.Contains(m.list.View(), "? waiting") && strings.Contains(m.detail.View(), "? asks: Which database?")
	})
	if h := strings.Split(m.View(), "\n")[0]; !strings.Contains(h, "1 waiting") {
		t.Errorf("the header does not count the waiting run: %q", h)
	}
	order(t, m.detail.View(), "? asks: Which database?", "options: 1) postgres · 2) sqlite", "i answers it")
	m = press(t, m, "i")
	if !strings.Contains(m.View(), "answer run 7c1e0000 (1-2 or your own words): ") {
		t.Fatalf("i on a run that asks:\n%s", m.View())
	}
	// A number that is no option's is refused, and nothing is sent.
	m = press(t, m, "3", "enter")
	m = settle(t, m, func(m Model) bool { return strings.Contains(m.View(), "3 is not one of the question's options (1-2)") })
	if in, err := runs.ReadInbox(dir); err != nil || len(in) != 1 {
		t.Fatalf("inbox after answering 3 of two options: %+v %v", in, err)
	}
	m = press(t, m, "i", "2", "enter")
	m = settle(t, m, func(m Model) bool { return strings.Contains(m.View(), "answer sent to run 7c1e0000: option 2, sqlite") })
	in, err := runs.ReadInbox(dir)
	if err != nil || len(in) != 2 || in[1].Kind != runs.MessageAnswer || in[1].Text != "sqlite" || in[1].QuestionID != "q1" {
		t.Fatalf("inbox after the answer: %+v %v", in, err)
	}
}

// Once the runs are loaded, each change of a run's record is told, with
// the record before it: what the notifier makes its events of.
func TestRunChangesAreTold(t *testing.T) {
	f := orchestrated(t)
	var mu sync.Mutex
	var told []string
	f.notifyRun = func(prev, cur *runs.Record) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, string(prev.Status)+">"+string(cur.Status))
	}
	m := f.newModel(120, 40)
	f.rewriteRun(runID, func(r *runs.Record) {
		r.Status, r.Question = runs.StatusWaiting, &runs.Question{ID: "q1", Text: "Which database?", AskedAt: clock}
	})
	m = settle(t, m, func(m Model) bool { return strings.Contains(m.list.View(), "? waiting") })
	f.rewriteRun(runID, func(r *runs.Record) {
		end := clock
		r.Status, r.Question, r.Owner, r.EndedAt = runs.StatusCompleted, nil, nil, &end
	})
	settle(t, m, func(m Model) bool {
		mu.Lock()
		defer mu.Unlock()
		return len(told) >= 2
	})
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(told, " ") != "running>waiting waiting>completed" {
		t.Fatalf("told %q, want the question, then the end", told)
	}
}

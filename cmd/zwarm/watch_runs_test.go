package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// zwarm watch tells a person working without a dashboard that a run waits
// for them, and that it ended: on a terminal with --notify it rings and
// prints how to answer; --json prints each as an object of its own.
func TestWatchTellsOfARunsQuestionAndEnd(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "ASK CLI: watch me"
	srv.On(task, replyCalls(fcall("ask_user", map[string]any{"question": "Which port?\x1b[2J", "options": []string{"80", "8080"}})),
		replyCalls(fcall("finish", map[string]any{"summary": "decided"})))

	// One watch on a terminal, with --notify.
	cmd := exec.Command(bins.zwarm, "watch", "--notify")
	cmd.Dir, cmd.Env = w.Work, w.env()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 160, Rows: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait(); f.Close() }()
	shown := recordScreen(f)
	// One piped, with --json.
	js := w.startWatch("--json")
	sessionstest.Eventually(t, "both watches to follow the state dir", func() bool {
		return watchesFiles(cmd.Process.Pid) && watchesFiles(js.cmd.Process.Pid)
	})

	bg := w.start("orchestrate", task)
	run := w.waitingRun()
	short := record.ShortID(run.ID)
	if !waitUntil(func() bool { return strings.Contains(visible(shown()), "run asks    "+short+"  Which port?") }, time.Minute) {
		t.Fatalf("the terminal's watch did not print the question:\n%q", tailOf(visible(shown()), 2000))
	}
	line := js.waitLine(`"event":"run.asks"`)
	var asks runNotice
	if err := json.Unmarshal([]byte(line), &asks); err != nil || asks.RunID != run.ID || asks.Text != "Which port?\x1b[2J" ||
		strings.Join(asks.Options, "|") != "80|8080" || asks.Status != runs.StatusWaiting || asks.Task != task {
		t.Fatalf("watch --json: %s (%+v, %v)", line, asks, err)
	}
	if s := visible(shown()); !strings.Contains(s, "[1] 80 [2] 8080 (zwarm runs answer "+short+" ...)") || strings.Contains(s, "\x1b[2J") {
		t.Fatalf("the question as watch printed it:\n%q", tailOf(s, 2000))
	}
	if n := strings.Count(shown(), "\a"); n != 1 {
		t.Fatalf("watch --notify rang %d times for the question, want once:\n%q", n, tailOf(shown(), 2000))
	}

	w.ok("runs", "answer", short, "2")
	if code := bg.wait(); code != 0 {
		t.Fatalf("orchestrate exit %d\n%s", code, bg.stderr.String())
	}
	sessionstest.Eventually(t, "the terminal's watch to print the end and ring again", func() bool {
		s := shown()
		return strings.Contains(visible(s), "run ended   "+short+"  completed: decided") && strings.Count(s, "\a") == 2
	})
	line = js.waitLine(`"event":"run.finished"`)
	var ended runNotice
	if err := json.Unmarshal([]byte(line), &ended); err != nil || ended.RunID != run.ID || ended.Status != runs.StatusCompleted || ended.Text != "completed: decided" {
		t.Fatalf("watch --json: %s (%+v, %v)", line, ended, err)
	}
	if code, lines := js.interrupt(); code != 0 && code != 130 || len(lines) != 2 {
		t.Fatalf("watch --json: exit %d, %d lines (want the two run notices):\n%s", code, len(lines), strings.Join(lines, "\n"))
	}
}

// tailOf is the end of s, for a failure message about a long screen.
func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// A pilot run its person left (:quit, or the end of its input) is not
// told of as finished: the person did it. A run that ends by itself is.
func TestLeavingAPilotIsNotTold(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	srv.On("LEAVE ME", fakemodel.Reply{Text: "ok"})
	srv.On("FINISH ME", replyCalls(fcall("finish", map[string]any{"summary": "finished"})))
	js := w.startWatch("--json")
	sessionstest.Eventually(t, "the watch to follow the state dir", func() bool { return watchesFiles(js.cmd.Process.Pid) })
	if r := w.pilotScript("LEAVE ME\n:quit\n"); r.code != 0 {
		t.Fatalf("pilot: exit %d\n%s", r.code, r.stderr)
	}
	w.ok("orchestrate", "FINISH ME")
	// The watch tells of changes in order: once the second run's end is
	// told, the first's would have been.
	js.waitLine(`"event":"run.finished"`, `"task":"FINISH ME"`)
	_, lines := js.interrupt()
	for _, l := range lines {
		if strings.Contains(l, "LEAVE ME") {
			t.Errorf("the pilot its person left was told of: %s", l)
		}
	}
}

// recordScreen keeps all a terminal's program writes to f, read as it
// comes until the terminal closes, and returns what it has so far.
func recordScreen(f *os.File) func() string {
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		b := make([]byte, 32<<10)
		for {
			n, err := f.Read(b)
			mu.Lock()
			screen.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return func() string { mu.Lock(); defer mu.Unlock(); return screen.String() }
}

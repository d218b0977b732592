package notify

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/watch"
	"github.com/zwarm/zwarm/watchers"
)

// shRunner runs the command in place of zwarm __notify: $1 is the
// timeout, $2 the command.
var shRunner = []string{"sh", "-c", `eval "$2"`, "notify"}

// lines waits until path holds want lines and returns them; it fails the
// test, saying what it saw, if they have not come within a minute.
func lines(t *testing.T, path string, want int) []string {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		got = strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(b) == 0 {
			got = nil
		}
		if len(got) >= want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s should have held %d lines within a minute; it holds %d: %q", path, want, len(got), got)
		}
	}
}

// Many notifiers seeing the same event at once run its command once; the
// next occurrence (another key) runs it again; the environment says what
// happened.
func TestAnEventIsSentOnceWhoeverSeesIt(t *testing.T) {
	dir, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	cfg := &Config{Command: `echo "$ZWARM_EVENT $ZWARM_ID $ZWARM_STATUS $ZWARM_TEXT" >> ` + out}
	ev := Event{Name: WorkerCompleted, ID: "3f2a", Status: "completed", Text: "done\n\x1b[31mred", Dir: dir, Key: "turn-1"}
	var wg sync.WaitGroup
	sent := make(chan bool, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent <- New(cfg, Options{Runner: shRunner}).Notify(ev)
		}()
	}
	wg.Wait()
	close(sent)
	n := 0
	for s := range sent {
		if s {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d notifiers ran the command, want 1", n)
	}
	ev.Key = "turn-2"
	if !New(cfg, Options{Runner: shRunner}).Notify(ev) {
		t.Fatal("the next turn's completion was not sent")
	}
	got := lines(t, out, 2)
	want := "worker.completed 3f2a completed done [31mred"
	if len(got) != 2 || got[0] != want || got[1] != want {
		t.Fatalf("the command ran with %q, want twice %q", got, want)
	}
}

// An event [notify] on does not name runs nothing and rings nothing.
func TestOnlyTheEventsNamed(t *testing.T) {
	var bell bytes.Buffer
	out := filepath.Join(t.TempDir(), "out")
	n := New(&Config{Command: "echo x >> " + out, On: []string{RunFinished}}, Options{Runner: shRunner, Bell: &bell})
	if n.Notify(Event{Name: WorkerCompleted, ID: "a", Dir: t.TempDir()}) || bell.Len() > 0 {
		t.Fatalf("an event not named was sent (bell %q)", bell.String())
	}
	if !n.Notify(Event{Name: RunFinished, ID: "a", Dir: t.TempDir()}) || bell.String() == "" {
		t.Fatalf("a named event was not sent (bell %q)", bell.String())
	}
}

func TestConfigRefusesWhatCannotWork(t *testing.T) {
	for _, c := range []Config{{On: []string{"worker.done"}}, {Timeout: "soon"}, {Timeout: "-1s"}} {
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "[notify]") {
			t.Errorf("%+v: %v, want an error naming [notify]", c, err)
		}
	}
	if err := (&Config{On: Events, Timeout: "3s"}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// The bell rings each time, notifier by notifier (each its own terminal),
// and says the event where the terminal shows OSC 9 notifications.
func TestTheBell(t *testing.T) {
	t.Setenv("TMUX", "")
	t.Setenv("TERM", "xterm-256color")
	t.Setenv("WT_SESSION", "")
	t.Setenv("TERM_PROGRAM", "")
	ev := Event{Name: WorkerFailed, ID: "3f2a0000-0000", Text: "failed: \x1b]52;x\x07 fix it", Dir: t.TempDir()}
	var plain, osc bytes.Buffer
	New(&Config{}, Options{Bell: &plain}).Notify(ev)
	New(&Config{}, Options{Bell: &plain}).Notify(ev)
	if plain.String() != "\a\a" {
		t.Fatalf("bell %q, want two BELs", plain.String())
	}
	t.Setenv("TERM_PROGRAM", "WezTerm")
	New(&Config{}, Options{Bell: &osc}).Notify(ev)
	if want := "\x1b]9;zwarm: worker.failed 3f2a0000 failed: ]52;x fix it\x07\a"; osc.String() != want {
		t.Fatalf("bell %q, want %q", osc.String(), want)
	}
	off := false
	var none bytes.Buffer
	New(&Config{Terminal: &off}, Options{Bell: &none}).Notify(ev)
	if none.Len() > 0 {
		t.Fatalf("terminal = false rang %q", none.String())
	}
}

// readFile is path's content, or "" if it cannot be read.
func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// Run stops a command at its timeout, with what it started; a failing
// command's error says how, with its output.
func TestRunBoundsTheCommand(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	// The timeout is meant to pass; the sleep outlasts any wait here, so
	// a Run that waited for it would show.
	err := Run(context.Background(), time.Second, "sleep 300 & echo $! > "+pidFile+"; wait")
	if err == nil || !strings.Contains(err.Error(), "still running after 1s") {
		t.Fatalf("a hanging command should have been stopped after 1s; Run returned %v", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("a hanging command held Run for %s: it should be stopped after its 1s timeout", d)
	}
	// What it started goes with it: gone, or a zombie not yet reaped.
	if pid := strings.TrimSpace(readFile(pidFile)); pid == "" {
		t.Log("the command was stopped before it wrote its sleep's pid: there is nothing left to check")
	} else {
		var stat string
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			out, _ := exec.Command("sh", "-c", "kill -0 "+pid+" 2>/dev/null && ps -o stat= -p "+pid).Output()
			if stat = string(bytes.TrimSpace(out)); stat == "" || strings.HasPrefix(stat, "Z") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("what the command started (pid %s) should have been killed with it; a minute on it is still there, state %q", pid, stat)
			}
		}
	}
	// A minute for a command that exits at once.
	err = Run(context.Background(), time.Minute, "echo no such tool >&2; exit 3")
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "no such tool") {
		t.Fatalf("a failing command's error should give its exit status 3 and its output \"no such tool\"; Run returned %v", err)
	}
}

// What happened before the watchers started is not told; a completion, a
// failure and a stall while they run are, each once.
func TestWorkersTellWhatHappens(t *testing.T) {
	state, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	w := New(&Config{Command: `echo "$ZWARM_EVENT" >> ` + out}, Options{Runner: shRunner}).Workers(state)
	now := time.Now()
	s := new(sessionstest.WithStatus(record.Session{ID: "3f2a0000-0000-4000-8000-000000000001", Task: "t",
		Turns: []record.Turn{{N: 1, StartedAt: now}}}, record.StatusCompleted))
	os.MkdirAll(filepath.Join(state, "sessions", s.ID), 0o700)
	w.Update(watch.Update{ID: s.ID, Session: s, Initial: true})
	running := *s
	sessionstest.SetStatus(&running, record.StatusRunning)
	running.LastEventAt = &now
	running.Turns = append(running.Turns, record.Turn{N: 2, StartedAt: now})
	w.Update(watch.Update{ID: s.ID, Session: &running, Prev: record.StatusCompleted})
	w.Alert(watchers.Alert{Watcher: "stall", SessionID: s.ID, Status: record.StatusRunning})
	w.Alert(watchers.Alert{Watcher: "stall", SessionID: s.ID, Status: record.StatusRunning}) // the same silence
	w.Alert(watchers.Alert{Watcher: "hollow", SessionID: s.ID})
	failed := running
	sessionstest.SetStatus(&failed, record.StatusFailed)
	w.Update(watch.Update{ID: s.ID, Session: &failed, Prev: record.StatusRunning})
	w.Update(watch.Update{ID: s.ID, Session: &failed, Prev: record.StatusFailed})
	lines(t, out, 2)
	time.Sleep(300 * time.Millisecond) // a third would have come by now
	b, _ := os.ReadFile(out)
	got := strings.Fields(string(b))
	if strings.Join(got, ",") != "worker.stalled,worker.failed" && strings.Join(got, ",") != "worker.failed,worker.stalled" {
		t.Fatalf("told %q, want one stall and one failure", got)
	}
}

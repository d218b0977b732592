package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// Two dashboards and a watcher (and the wait) see a worker complete and
// another fail at once: the [notify] command runs once for each, and each
// dashboard rings its own terminal for both.
func TestNotifyOncePerEventWhoeverSeesIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	os.MkdirAll(w.State, 0o700)
	log := filepath.Join(t.TempDir(), "notified")
	writeFile(t, filepath.Join(w.State, "config.toml"), fmt.Sprintf("kill_grace = \"1s\"\n[notify]\ncommand = 'echo \"$ZWARM_EVENT $ZWARM_ID $ZWARM_STATUS\" >> %s'\n", log))
	gate := filepath.Join(t.TempDir(), "go")
	w.setScript(append([]fakeagent.Step{{"wait_file": gate}}, fakeagent.Completes("all good", 10)...),
		"break it", []fakeagent.Step{{"wait_file": gate}, fakeagent.Out(`{"type":"turn.failed","error":{"message":"nope"}}`), {"exit": 1}})
	good, bad := w.spawn("do it"), w.spawn("break it")
	for _, id := range []string{good, bad} {
		sessionstest.Eventually(t, "session "+id+" to run", func() bool { s := w.record(id); return s.Status() == record.StatusRunning })
	}

	watch := exec.Command(bins.zwarm, "watch", "--all")
	watch.Dir, watch.Env = w.Work, w.env()
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { watch.Process.Signal(os.Interrupt); watch.Wait() }()
	// Two dashboards, each on a terminal of its own.
	var bells []func() int
	for range 2 {
		dash := exec.Command(bins.zwarm, "dash")
		dash.Dir, dash.Env = w.Work, w.env()
		f, err := pty.StartWithSize(dash, &pty.Winsize{Cols: 120, Rows: 40})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { f.Write([]byte("q")); dash.Wait(); f.Close() }()
		screen := recordScreen(f)
		// Its header counts the two sessions running once it has them
		// both; its watchers subscribed before it drew.
		shows := func(want string) func() bool {
			return func() bool { return strings.Contains(visible(screen()), want) }
		}
		if !waitUntil(shows("q quit"), time.Minute) || !waitUntil(shows("2 running"), time.Minute) {
			t.Fatalf("dashboard %d: want its frame with \"2 running\" in the header within a minute; it drew:\n%s", len(bells)+1, visible(screen()))
		}
		bells = append(bells, func() int { return strings.Count(screen(), "\a") })
	}
	sessionstest.Eventually(t, "zwarm watch to follow the state dir (an inotify descriptor open)", func() bool { return watchesFiles(watch.Process.Pid) })
	before := []int{bells[0](), bells[1]()}
	touch(t, gate)
	if r := w.bin("wait", good, bad); r.code != 1 {
		t.Fatalf("wait: %d %s", r.code, r.stderr)
	}
	want := []string{"worker.completed " + good + " completed", "worker.failed " + bad + " failed"}
	sessionstest.Eventually(t, "both notifications", func() bool {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "\n") >= 2
	})
	for i, bell := range bells {
		sessionstest.Eventually(t, fmt.Sprintf("dashboard %d's bells", i+1), func() bool { return bell() >= before[i]+2 })
	}
	time.Sleep(time.Second) // a duplicate would have come by now
	b, _ := os.ReadFile(log)
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(got) != 2 || !(got[0] == want[0] && got[1] == want[1] || got[0] == want[1] && got[1] == want[0]) {
		t.Fatalf("the command ran for %q, want once for each of %q", got, want)
	}
}

// A notify command that hangs holds up nothing: wait returns at once,
// and the command is stopped at [notify] timeout, which the log says.
func TestAHangingNotifyCommandHoldsUpNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), "[notify]\ncommand = \"sleep 31.5\"\ntimeout = \"1s\"\n")
	id := w.spawn("do it")
	start := time.Now()
	w.ok("wait", id)
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("wait took %s with a notify command that sleeps 31.5 s; want it back well before the command ends", d)
	}
	sessionstest.Eventually(t, "the command stopped at its timeout", func() bool {
		return len(procsWithArgs("sleep", "31.5")) == 0
	})
	sessionstest.Eventually(t, "the log saying so", func() bool {
		b, _ := os.ReadFile(filepath.Join(w.State, "logs", "zwarm.log"))
		return strings.Contains(string(b), "still running after 1s")
	})
	// A second wait sees the same completion: already sent, nothing runs.
	w.ok("wait", id)
	time.Sleep(300 * time.Millisecond)
	if p := procsWithArgs("sleep", "31.5"); len(p) > 0 {
		t.Fatalf("the completion was sent again: %v", p)
	}
}

// procsWithArgs lists the pids of this user's processes whose command
// line is exactly args.
func procsWithArgs(args ...string) []string {
	ents, _ := os.ReadDir("/proc")
	want := strings.Join(args, "\x00") + "\x00"
	var out []string
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(b) == want {
			out = append(out, e.Name())
		}
	}
	return out
}

// A run that asks, then finishes, is told of twice: its question and its
// end, each once.
func TestNotifyARunsQuestionAndEnd(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	os.MkdirAll(w.State, 0o700)
	log := filepath.Join(t.TempDir(), "notified")
	writeFile(t, filepath.Join(w.State, "config.toml"), fmt.Sprintf("[orchestrator]\nask_timeout = \"300ms\"\n[notify]\ncommand = 'echo \"$ZWARM_EVENT $ZWARM_ID $ZWARM_STATUS $ZWARM_TEXT\" >> %s'\n", log))
	task := "ASK CLI: notify me"
	srv.On(task, replyCalls(fcall("ask_user", map[string]any{"question": "Which port?"})), replyCalls(fcall("finish", map[string]any{"summary": "decided"})))
	if r := w.zwarm("orchestrate", task); r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	id := w.runs()[0].ID
	want := []string{"run.asks " + id + " waiting asks: Which port?", "run.finished " + id + " completed completed: " + task + " · decided"}
	sessionstest.Eventually(t, "both notifications", func() bool {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "\n") >= 2
	})
	b, _ := os.ReadFile(log)
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	sort.Strings(got) // each runs apart: either may write first
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("told %q, want %q", got, want)
	}
}

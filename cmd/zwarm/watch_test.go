package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// watching is a running `zwarm watch` whose output lines are collected.
type watching struct {
	t      *testing.T
	cmd    *exec.Cmd
	mu     sync.Mutex
	lines  []string
	stderr strings.Builder
	done   chan struct{}
}

func (w *world) startWatch(args ...string) *watching {
	w.t.Helper()
	cmd := exec.Command(bins.zwarm, append([]string{"watch"}, args...)...)
	cmd.Dir, cmd.Env = w.Work, w.env()
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	wa := &watching{t: w.t, cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &wa.stderr
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() {
		defer close(wa.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			wa.mu.Lock()
			wa.lines = append(wa.lines, sc.Text())
			wa.mu.Unlock()
		}
	}()
	w.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return wa
}

// waitLine waits for a line that has every one of wants and returns it.
func (wa *watching) waitLine(wants ...string) string {
	wa.t.Helper()
	var found string
	sessionstest.Eventually(wa.t, "zwarm watch to print "+strings.Join(wants, " and "), func() bool {
		wa.mu.Lock()
		defer wa.mu.Unlock()
		for _, l := range wa.lines {
			ok := true
			for _, w := range wants {
				ok = ok && strings.Contains(l, w)
			}
			if ok {
				found = l
				return true
			}
		}
		return false
	})
	return found
}

// interrupt sends Ctrl+C and returns the exit code and all lines.
func (wa *watching) interrupt() (int, []string) {
	wa.t.Helper()
	wa.cmd.Process.Signal(os.Interrupt)
	<-wa.done
	err := wa.cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		wa.t.Fatal(err)
	}
	wa.mu.Lock()
	defer wa.mu.Unlock()
	return code, append([]string(nil), wa.lines...)
}

type alertJSON struct {
	Watcher   string `json:"watcher"`
	SessionID string `json:"session_id"`
	Action    string `json:"action"`
	Reason    string `json:"reason"`
	Status    string `json:"status"`
	Task      string `json:"task"`
	Source    string `json:"source"`
	At        string `json:"at"`
}

// zwarm watch --json reports a silent session, a failure and a worker
// past its cap (stopped), one JSON object a line; Ctrl+C ends it with 0.
func TestWatchJSONAlerts(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if err := os.MkdirAll(w.State, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.State, "config.toml"),
		"kill_grace = \"1s\"\n[watchers.stall]\nfirst_event = \"1s\"\n[watchers.cost_guard]\nmax_tokens = 10000\n")
	gate := filepath.Join(t.TempDir(), "gate")
	w.setScript(fakeagent.Completes("done", 5),
		"hang", []fakeagent.Step{{"wait_file": gate + "-never"}},
		"fails later", []fakeagent.Step{fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), {"wait_file": gate},
			fakeagent.Out(`{"type":"turn.failed","error":{"message":"the model is overloaded"}}`), {"exit": 1}},
		"fails now", []fakeagent.Step{fakeagent.Out(`{"type":"turn.failed","error":{"message":"old news"}}`), {"exit": 1}},
		"burn", []fakeagent.Step{fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), fakeagent.Out(`{"type":"turn.started"}`),
			fakeagent.Out(`{"type":"turn.completed","usage":{"input_tokens":50000,"cached_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}`),
			{"wait_file": gate + "-never"}},
	)
	// Failed before watch started: history, not reported.
	old := strings.Fields(w.zwarm("spawn", "--wait", "--", "fails now").stdout)[0]
	hang := w.spawn("hang")
	fails := w.spawn("fails later")
	wa := w.startWatch("--json")
	wa.waitLine(`"watcher":"stall"`, hang)
	touch(t, gate) // now "fails later" fails, after watch started
	wa.waitLine(`"watcher":"failure"`, fails)
	// The watch stops "burn" as soon as its usage is recorded: on a busy
	// machine that can be before spawn has returned, which then says so
	// with exit 1, as for any session that failed or was killed.
	r := w.zwarm("spawn", "--", "burn")
	burn := strings.TrimSpace(r.stdout)
	burned := w.record(burn)
	if r.code != 0 && (r.code != cli.ExitFailure || burned.Status() != record.StatusKilled) {
		t.Fatalf("spawn burn: %+v", r)
	}
	wa.waitLine(`"watcher":"cost_guard"`, burn)
	code, lines := wa.interrupt()
	if code != cli.ExitInterrupted {
		t.Fatalf("exit %d\n%s", code, wa.stderr.String())
	}
	byWatcher := map[string]alertJSON{}
	for _, l := range lines {
		var a alertJSON
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		byWatcher[a.Watcher+" "+a.SessionID] = a
	}
	if a := byWatcher["stall "+hang]; a.Action != "nudge" || !strings.HasPrefix(a.Reason, "no first event") || a.Status != "running" || a.Task != "hang" || a.Source != "user" || a.At == "" {
		t.Errorf("stall %+v", a)
	}
	if a := byWatcher["failure "+fails]; a.Action != "nudge" || a.Reason != "failed (exit 1): the model is overloaded" {
		t.Errorf("failure %+v", a)
	}
	if a := byWatcher["cost_guard "+burn]; a.Action != "stop" || a.Reason != "stopped: it used 50k tokens, its cap is 10k (cost_guard max_tokens)" {
		t.Errorf("cost_guard %+v", a)
	}
	for k := range byWatcher {
		if strings.HasSuffix(k, old) {
			t.Errorf("reported a session that failed before watch started: %s", k)
		}
	}
	if s := w.show(burn); s.Status() != "killed" || !strings.Contains(s.Error, "stopped by watcher cost_guard") {
		t.Errorf("burn: %s %q", s.Status(), s.Error)
	}
	if wa.stderr.String() != "zwarm: interrupted\n" {
		t.Errorf("stderr when piped: %q, want only the interruption", wa.stderr.String())
	}
}

// Piped, zwarm watch prints plain lines; it watches the sessions a person
// spawned, or the ones named; bad settings stop it with 2.
func TestWatchPlainAndItsErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if err := os.MkdirAll(w.State, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.State, "config.toml"), "kill_grace = \"1s\"\n[watchers.stall]\nfirst_event = \"1s\"\n")
	gate := filepath.Join(t.TempDir(), "never")
	w.setScript(fakeagent.Completes("done", 5), "hang", []fakeagent.Step{{"wait_file": gate}}, "quiet too", []fakeagent.Step{{"wait_file": gate}})
	hang := w.spawn("hang")
	other := w.spawn("quiet too")
	wa := w.startWatch(hang[:8])
	line := wa.waitLine("stall", hang[:8], "no first event", "· hang")
	if strings.Contains(line, "\x1b[") {
		t.Errorf("colour when piped: %q", line)
	}
	code, lines := wa.interrupt()
	if code != cli.ExitInterrupted {
		t.Fatalf("exit %d: %s", code, wa.stderr.String())
	}
	for _, l := range lines {
		if strings.Contains(l, other[:8]) {
			t.Errorf("a session not named was watched: %q", l)
		}
	}
	for _, c := range []struct {
		config string
		args   []string
		want   string
	}{
		{"[watchers.stall]\nafterr = \"1m\"\n", nil, "unknown key watchers.stall.afterr"},
		{"[watchers.progress]\nrepeats = 1\n", nil, "progress.repeats is 1"},
		{"[watchers.stall]\nenabled = false\n[watchers.failure]\nenabled = false\n[watchers.hollow]\nenabled = false\n[watchers.cost_guard]\nenabled = false\n[watchers.overlap]\nenabled = false\n", nil, "nothing to watch"},
		{"", []string{"--all", hang}, "give session ids or --all, not both"},
		{"", []string{"abcdef"}, "abcdef"},
	} {
		writeFile(t, filepath.Join(w.State, "config.toml"), c.config)
		r := w.zwarm(append([]string{"watch"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("config %q args %q: exit %d, stderr %q; want 2 and %q", c.config, c.args, r.code, r.stderr, c.want)
		}
		if c.config != "" && !strings.Contains(r.stderr, filepath.Join(w.State, "config.toml")) {
			t.Errorf("the error does not name the file: %q", r.stderr)
		}
	}
}

// Two live workers changing the same file: zwarm watch prints one overlap
// alert naming both and the file, with only overlap enabled. (The test's
// working dir is no git repository, so both work in place; worktrees and
// their paths are the watchers package's tests.)
func TestWatchOverlap(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if err := os.MkdirAll(w.State, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.State, "config.toml"),
		"[watchers.stall]\nenabled = false\n[watchers.failure]\nenabled = false\n[watchers.hollow]\nenabled = false\n[watchers.cost_guard]\nenabled = false\n")
	never := filepath.Join(t.TempDir(), "never")
	// Reported relative to the agent's working dir; the other file differs.
	edits := func(path string) []fakeagent.Step {
		return []fakeagent.Step{fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), fakeagent.Out(`{"type":"turn.started"}`),
			fakeagent.Out(`{"type":"item.completed","item":{"id":"f1","type":"file_change","changes":[{"path":"api/server.go","kind":"update"},{"path":"` + path + `","kind":"add"}],"status":"completed"}}`),
			{"wait_file": never}}
	}
	w.setScript(fakeagent.Completes("done", 700), "edit a", edits("a.go"), "edit b", edits("b.go"))
	wa := w.startWatch()
	a := w.spawn("edit a")
	b := w.spawn("edit b")
	line := wa.waitLine("overlap", "both change api/server.go, both in place")
	if !strings.Contains(line, a[:8]) || !strings.Contains(line, b[:8]) {
		t.Errorf("the alert does not name both workers (%s, %s): %q", a[:8], b[:8], line)
	}
	code, lines := wa.interrupt()
	if code != cli.ExitInterrupted {
		t.Fatalf("exit %d: %s", code, wa.stderr.String())
	}
	n := 0
	for _, l := range lines {
		if strings.Contains(l, "overlap") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d overlap alerts, want 1:\n%s", n, strings.Join(lines, "\n"))
	}
}

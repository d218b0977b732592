package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// procsWithEnv lists live processes whose environment holds entry: the
// processes a command started inherit its environment.
func procsWithEnv(entry string) []int {
	want := []byte(entry + "\x00")
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && bytes.Contains(append(b, 0), want) && sessionstest.Alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// procWatch samples, while a demo runs, every process it started (they
// carry its TMPDIR), so that each can be checked by pid once it is over.
type procWatch struct {
	entry string
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	seen  map[int]string // pid: its command line
}

func watchProcs(entry string) *procWatch {
	p := &procWatch{entry: entry, stop: make(chan struct{}), done: make(chan struct{}), seen: map[int]string{}}
	go func() {
		defer close(p.done)
		for {
			for _, pid := range procsWithEnv(entry) {
				cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				p.mu.Lock()
				if _, ok := p.seen[pid]; !ok {
					p.seen[pid] = strings.ReplaceAll(string(cmdline), "\x00", " ")
				}
				p.mu.Unlock()
			}
			select {
			case <-p.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return p
}

// check stops sampling and fails the test if any process the demo started
// is alive, by the pids seen while it ran and by what is running now.
func (p *procWatch) check(t *testing.T, atLeast int) {
	t.Helper()
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.seen) < atLeast {
		t.Errorf("saw only %d processes of the demo: %v", len(p.seen), p.seen)
	}
	for pid, cmd := range p.seen {
		if sessionstest.Alive(pid) {
			t.Errorf("process %d (%s) outlived the demo", pid, cmd)
		}
	}
	if left := procsWithEnv(p.entry); len(left) > 0 {
		t.Errorf("processes of the demo still running: %v", left)
	}
}

// The newcomer's first command, headless, from a directory that is not a
// checkout: real supervised workers play the recordings built into the
// binary, and the orchestrated task runs with its recorded model, its
// steps printed as zwarm orchestrate prints them. When it is over, nothing
// it started is running and its temp dir is gone.
func TestDemoWithoutTUI(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tmp := t.TempDir()
	w.extraEnv = []string{"TMPDIR=" + tmp}
	procs := watchProcs("TMPDIR=" + tmp)
	r := w.zwarm("demo", "--no-tui", "--speed", "40")
	// Five recorded workers and two of the run: each a supervisor and an
	// agent, and the run's shell.
	procs.check(t, 14)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout
	for _, want := range []string{"task: Add rate limiting to the HTTP API", "step 1/10 · ", "→ delegate task=", "← started ",
		`→ wait mode="all"`, "→ check_session session_id=", "→ exec_command cmd=", "← exit 0 · ", "→ finish summary=",
		"completed after 5 steps · $", "2 workers", "Rate limiting is in", "\trunning\t", "profile zwarm ls"} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo printed no %q:\n%s", want, out)
		}
	}
	// Piped, the table is printed once, then a line per change: the last
	// word on each session is the person's five and the run's two, which
	// say whose they are.
	if n := strings.Count(out, "ID\tSTATUS\t"); n != 1 {
		t.Errorf("the table was printed %d times, want once:\n%s", n, out)
	}
	status, source := map[string]string{}, map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Split(l, "\t")
		switch {
		case len(f) == 11 && f[0] != "ID": // a table row: id status ... source task
			status[f[0]], source[f[0]] = f[1], f[9]
		case len(f) == 6 && strings.HasPrefix(f[3], "turn "): // a change: time id status turn source task
			if _, err := time.Parse(time.RFC3339, f[0]); err != nil {
				t.Errorf("change line %q: %v", l, err)
			}
			status[f[1]], source[f[1]] = f[2], f[4]
		}
	}
	count := func(m map[string]string, pred func(string) bool) (n int) {
		for _, v := range m {
			if pred(v) {
				n++
			}
		}
		return n
	}
	is := func(want string) func(string) bool { return func(v string) bool { return v == want } }
	if count(status, is("completed")) != 6 || count(status, is("failed")) != 1 || count(source, is("user")) != 5 ||
		count(source, func(v string) bool { return strings.HasPrefix(v, "run:") }) != 2 {
		t.Errorf("the last word on each session: status %v, source %v\n%s", status, source, out)
	}
	if strings.Contains(r.stderr, "resume with") {
		t.Errorf("stderr %q", r.stderr)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("demo left %v in its temp dir", left)
	}
}

// On the dashboard, the run is a row with its workers under it and its
// steps beside; quitting while it works ends everything the demo started.
func TestDemoOnTheDashboard(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tmp := t.TempDir()
	w.extraEnv = []string{"TMPDIR=" + tmp}
	procs := watchProcs("TMPDIR=" + tmp)
	cmd := exec.Command(bins.zwarm, "demo", "--speed", "4")
	cmd.Dir = w.Work
	cmd.Env = append(w.env(), "TERM=tmux-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mu sync.Mutex
	var buf bytes.Buffer
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			mu.Lock()
			buf.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	shows := func(what ...string) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range what {
			if !strings.Contains(buf.String(), s) {
				return false
			}
		}
		return true
	}
	want := []string{"runs: ", "run:", "● running · step", "├ ", "└ ", "gpt-5.1 · up to 10 steps", "task: Add rate limiting", "→ delegate"}
	deadline := time.Now().Add(20 * time.Second)
	for !shows(want...) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	for _, w := range want {
		if !shows(w) {
			mu.Lock()
			t.Errorf("the dashboard never showed %q:\n%q", w, visible(buf.String()))
			mu.Unlock()
		}
	}
	f.Write([]byte("q"))
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("demo: %v", err)
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the demo did not quit on q")
	}
	procs.check(t, 4)
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("demo left %v in its temp dir", left)
	}
}

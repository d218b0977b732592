package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// background is a zwarm process the test runs beside its own commands.
type background struct {
	t              *testing.T
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
	done           chan struct{}
	code           int
}

// start starts zwarm in the background, its output piped.
func (w *world) start(args ...string) *background {
	w.t.Helper()
	b := &background{t: w.t, cmd: exec.Command(bins.zwarm, args...), done: make(chan struct{})}
	b.cmd.Dir, b.cmd.Env = w.Work, w.env()
	b.cmd.Stdout, b.cmd.Stderr = &b.stdout, &b.stderr
	if err := b.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() {
		defer close(b.done)
		b.cmd.Wait()
		b.code = b.cmd.ProcessState.ExitCode()
	}()
	w.t.Cleanup(func() {
		b.cmd.Process.Kill()
		<-b.done
	})
	return b
}

// wait waits for the process to exit and returns its exit code.
func (b *background) wait() int {
	b.t.Helper()
	select {
	case <-b.done:
		return b.code
	case <-time.After(time.Minute):
		b.cmd.Process.Kill()
		b.t.Fatalf("zwarm did not exit\nstdout %s\nstderr %s", b.stdout.String(), b.stderr.String())
		return -1
	}
}

// waitingRun waits until the only run waits for an answer.
func (w *world) waitingRun() runJSON {
	w.t.Helper()
	var run runJSON
	sessionstest.Eventually(w.t, "the run to ask", func() bool {
		// A run just made has no run.json yet, which runs reports.
		var list []runJSON
		r := w.zwarm("runs", "--json")
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil {
			return false
		}
		if len(list) == 1 && list[0].Status == runs.StatusWaiting {
			run = list[0]
			return true
		}
		return false
	})
	return run
}

// outputOf is the last output of tool in the last model request.
func outputOf(srv *fakemodel.Server, tool string) string {
	reqs := srv.Requests()
	outs := fakemodel.Outputs(reqs[len(reqs)-1].Body, tool)
	if len(outs) == 0 {
		return ""
	}
	return outs[len(outs)-1]
}

// userMessages are the user messages of a model request after the task.
func userMessages(body []byte) []string {
	var out []string
	for i, it := range fakemodel.Input(body) {
		if it.Type == "message" && it.Role == "user" && i > 1 {
			out = append(out, it.Text)
		}
	}
	return out
}

func offersAsk(body []byte) bool { return bytes.Contains(body, []byte(`"name":"ask_user"`)) }

// A run without a terminal asks; runs, runs show and --json show the
// question; runs answer answers it (a number picks an option) and a
// second answer is refused; text from the model reaches no terminal raw.
func TestRunsAnswerAnswersAWaitingRun(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "ASK CLI: which database"
	srv.On(task, replyCalls(fcall("ask_user", map[string]any{"question": "Which database?\x1b[31m", "options": []string{"postgres", "sqlite"}})),
		replyCalls(fcall("finish", map[string]any{"summary": "chose"})))
	bg := w.start("orchestrate", task)
	run := w.waitingRun()
	if q := run.Question; q == nil || q.Text != "Which database?\x1b[31m" || strings.Join(q.Options, "|") != "postgres|sqlite" || q.ID == "" {
		t.Fatalf("question %+v", run.Question)
	}
	short := record.ShortID(run.ID)
	if r := w.zwarm("runs"); r.code != 0 || !strings.Contains(r.stdout, "\twaiting\t") || !strings.Contains(r.stdout, task) {
		t.Errorf("runs piped: %+v", r)
	}
	show := w.ok("runs", "show", short)
	for _, want := range []string{"asks: Which database?", "options: 1) postgres · 2) sqlite", "answer with: zwarm runs answer " + short, "? asks: Which database?"} {
		if !strings.Contains(show, want) {
			t.Errorf("runs show lacks %q:\n%s", want, show)
		}
	}
	if strings.Contains(show, "\x1b") {
		t.Errorf("runs show printed the model's escape: %q", show)
	}
	r := w.zwarm("runs", "say", short, "and keep it simple")
	if r.code != 0 || !strings.Contains(r.stdout, "message 1 queued; its model reads it after the answer") || !strings.Contains(r.stderr, "zwarm runs answer "+short) {
		t.Errorf("say to a waiting run: %+v", r)
	}
	// A number that is no option's is refused, not sent as text.
	r = w.zwarm("runs", "answer", short, "3")
	if r.code != cli.ExitUsage || !strings.Contains(r.stderr, "3 is not one of the question's options (1-2)") {
		t.Errorf("answer 3 of two options: %+v", r)
	}
	r = w.zwarm("runs", "answer", short, "2")
	if r.code != 0 || !strings.Contains(r.stdout, "run "+short+" took the answer to: Which database?") || !strings.Contains(r.stdout, "option 2: sqlite") {
		t.Errorf("answer: %+v", r)
	}
	if code := bg.wait(); code != 0 {
		t.Fatalf("orchestrate exit %d\n%s\n%s", code, bg.stdout.String(), bg.stderr.String())
	}
	if got := outputOf(srv, "ask_user"); got != "[from the user, message 2] sqlite" {
		t.Errorf("ask_user's output: %q", got)
	}
	out := bg.stdout.String()
	for _, want := range []string{"? asks: Which database?", "options: 1) postgres · 2) sqlite", "← you (runs answer): sqlite", "you: and keep it simple"} {
		if !strings.Contains(out, want) {
			t.Errorf("orchestrate's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("orchestrate printed the model's escape: %q", out)
	}
	if r := w.zwarm("runs", "answer", short, "again"); r.code != 2 || !strings.Contains(r.stderr, "is completed and asks nothing: zwarm runs say") {
		t.Errorf("answer to a finished run: %+v", r)
	}
	if run := w.runs()[0]; run.Status != runs.StatusCompleted || run.Question != nil {
		t.Errorf("after: %+v", run)
	}
}

// Nobody answers within ask_timeout; --no-ask, and ask = false without a
// terminal, offer no ask_user at all.
func TestAskTimeoutAndNoAsk(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	os.MkdirAll(w.State, 0o700)
	cfg := filepath.Join(w.State, "config.toml")
	writeFile(t, cfg, "[orchestrator]\nask_timeout = \"300ms\"\n")
	task := "ASK CLI: nobody there"
	srv.On(task, replyCalls(fcall("ask_user", map[string]any{"question": "Which port?"})), replyCalls(fcall("finish", map[string]any{"summary": "decided"})))
	r := w.zwarm("orchestrate", task)
	if r.code != 0 || !strings.Contains(r.stdout, "no answer in time (ask_timeout)") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := outputOf(srv, "ask_user"); got != orchestrator.NoAnswer {
		t.Errorf("ask_user's output: %q", got)
	}
	for i, c := range []struct {
		config string
		flags  []string
		offer  bool
	}{
		{"", []string{"--no-ask"}, false},
		{"[orchestrator]\nask = false\n", nil, false},
		{"[orchestrator]\nask = true\n", nil, true},
	} {
		writeFile(t, cfg, c.config)
		task := fmt.Sprintf("ASK CLI: offered %d", i)
		srv.On(task, replyCalls(fcall("finish", map[string]any{"summary": "ok"})))
		w.ok(append(append([]string{"orchestrate"}, c.flags...), task)...)
		reqs := srv.Requests()
		if got := offersAsk(reqs[len(reqs)-1].Body); got != c.offer {
			t.Errorf("%q %v: ask_user offered %v", c.config, c.flags, got)
		}
	}
	writeFile(t, cfg, "[orchestrator]\nask_timeout = \"-1s\"\n")
	if r := w.zwarm("orchestrate", "x"); r.code != 2 || !strings.Contains(r.stderr, "ask_timeout") || !strings.Contains(r.stderr, "negative") {
		t.Errorf("a negative ask_timeout: %+v", r)
	}
}

// ptyRun is zwarm on a pseudo-terminal, read as it writes.
type ptyRun struct {
	t    *testing.T
	f    *os.File
	out  lockedBuffer
	cmd  *exec.Cmd
	done chan struct{}
}

func (w *world) interactive(args ...string) *ptyRun {
	w.t.Helper()
	return w.interactiveProgram(bins.zwarm, args...)
}

// interactiveProgram runs a program on a pseudo-terminal.
func (w *world) interactiveProgram(prog string, args ...string) *ptyRun {
	w.t.Helper()
	p := &ptyRun{t: w.t, cmd: exec.Command(prog, args...), done: make(chan struct{})}
	p.cmd.Dir = w.Work
	p.cmd.Env = append(w.env(), "TERM=tmux-256color", "NO_COLOR=1")
	f, err := pty.StartWithSize(p.cmd, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		w.t.Fatal(err)
	}
	p.f = f
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			p.out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	w.t.Cleanup(func() {
		p.cmd.Process.Kill()
		p.cmd.Wait()
		f.Close()
		<-p.done
	})
	return p
}

// await waits until the terminal shows text n times.
func (p *ptyRun) await(text string, n int) {
	p.t.Helper()
	sessionstest.Eventually(p.t, fmt.Sprintf("%q on the terminal", text), func() bool { return strings.Count(p.out.String(), text) >= n })
}

func (p *ptyRun) wait() int {
	p.t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(time.Minute):
		p.t.Fatalf("zwarm did not exit:\n%s", p.out.String())
	}
	// What it wrote last may still be in the terminal: read it to the end
	// (the read fails once no process holds the terminal).
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
	return p.cmd.ProcessState.ExitCode()
}

// On its terminal the run asks on stderr and reads the answer; when the
// answer comes from runs answer first, the prompt gives way.
func TestAskAnsweredFromItsTerminal(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "ASK TERM: which database"
	srv.On(task, replyCalls(fcall("ask_user", map[string]any{"question": "Which database?", "options": []string{"postgres", "sqlite"}})),
		replyCalls(fcall("ask_user", map[string]any{"question": "And the cache?"})),
		replyCalls(fcall("finish", map[string]any{"summary": "chose"})))
	p := w.interactive("orchestrate", task)
	p.await("your answer (1-2 or your own words): ", 1)
	for _, want := range []string{"? asks: Which database?", "options: 1) postgres · 2) sqlite", "(or from elsewhere: zwarm runs answer "} {
		if !strings.Contains(p.out.String(), want) {
			t.Errorf("the terminal lacks %q:\n%s", want, p.out.String())
		}
	}
	p.f.WriteString("\n") // an empty line asks again
	p.await("your answer (1-2 or your own words): ", 2)
	p.f.WriteString("3\n") // no option's number: refused, asked again
	p.await("your answer (1-2 or your own words): ", 3)
	if !strings.Contains(p.out.String(), "3 is not one of the question's options (1-2)") {
		t.Errorf("the terminal does not say why 3 was refused:\n%s", p.out.String())
	}
	p.f.WriteString("1\n")
	// The second question is answered from elsewhere while its prompt
	// waits, with a half-typed line.
	p.await("your answer: ", 1)
	p.f.WriteString("half typ")
	run := w.waitingRun()
	if r := w.zwarm("runs", "answer", run.ID, "redis"); r.code != 0 {
		t.Errorf("answer: %+v", r)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.out.String())
	}
	var outs []string
	reqs := srv.Requests()
	outs = fakemodel.Outputs(reqs[len(reqs)-1].Body, "ask_user")
	if strings.Join(outs, "|") != "[from the user] postgres|[from the user, message 1] redis" {
		t.Errorf("ask_user's outputs: %q", outs)
	}
	screen := p.out.String()
	for _, want := range []string{"option 1: postgres", "← you: postgres", "← you (runs answer): redis", "completed after 3 steps"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the terminal lacks %q:\n%s", want, screen)
		}
	}
	var evs []runs.Event
	for _, l := range strings.Split(w.ok("runs", "show", run.ID, "--jq", `.events[] | select(.type == "answer")`), "\n") {
		var ev runs.Event
		if json.Unmarshal([]byte(l), &ev) == nil {
			evs = append(evs, ev)
		}
	}
	if len(evs) != 2 || evs[0].Via != runs.AnswerTerminal || evs[1].Via != runs.AnswerInbox {
		t.Errorf("answer events %+v", evs)
	}
}

// Several processes say things to a live run at once: each message
// reaches the model once, before its next call, in the order sent.
func TestRunsSayFromManyProcesses(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "SAY CLI: many voices"
	stall := make(chan struct{})
	srv.On(task, fakemodel.Reply{Stall: stall, Calls: []fakemodel.Call{fcall("list_sessions", map[string]any{})}},
		replyCalls(fcall("list_sessions", map[string]any{})), replyCalls(fcall("finish", map[string]any{"summary": "heard"})))
	bg := w.start("orchestrate", task)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := srv.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	id := w.runs()[0].ID
	const senders, each = 4, 5
	var wg sync.WaitGroup
	for s := 0; s < senders; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if r := w.bin("runs", "say", id, fmt.Sprintf("sender %d says %d", s, i)); r.code != 0 {
					t.Errorf("say: %+v", r)
				}
			}
		}()
	}
	wg.Wait()
	close(stall)
	if code := bg.wait(); code != 0 {
		t.Fatalf("exit %d\n%s", code, bg.stderr.String())
	}
	reqs := srv.Requests()
	if got := userMessages(reqs[0].Body); len(got) != 0 {
		t.Errorf("the first call saw %q", got)
	}
	entries, err := runs.ReadInbox(runs.RunDir(w.State, id))
	if err != nil || len(entries) != senders*each {
		t.Fatalf("%d entries, %v", len(entries), err)
	}
	for _, req := range reqs[1:] {
		got := userMessages(req.Body)
		if len(got) != senders*each {
			t.Fatalf("a later call saw %d messages: %q", len(got), got)
		}
		next := map[int]int{}
		for i, m := range got {
			var s, n int
			if _, err := fmt.Sscanf(m, "[from the user, message %d] sender %d says %d", new(int), &s, &n); err != nil || m != fromUserText(entries[i]) {
				t.Fatalf("message %d is %q, entry %+v", i, m, entries[i])
			}
			if n != next[s] {
				t.Fatalf("sender %d: %d came where %d was due", s, n, next[s])
			}
			next[s]++
		}
	}
	for _, e := range entries {
		if e.State != runs.InboxDelivered || e.Step != 2 {
			t.Errorf("entry %+v", e)
		}
	}
	if n := strings.Count(bg.stdout.String(), "you: sender "); n != senders*each {
		t.Errorf("printed %d messages:\n%s", n, bg.stdout.String())
	}
}

func fromUserText(e runs.InboxEntry) string {
	return fmt.Sprintf("[from the user, message %d] %s", e.Seq, e.Text)
}

// A message to a stopped run is kept and given on resume, before the new
// instruction the resume brings.
func TestRunsSayToAStoppedRunArrivesOnResume(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "SAY CLI: stopped"
	stall := make(chan struct{})
	defer close(stall)
	srv.On(task, replyCalls(fcall("list_sessions", map[string]any{})), fakemodel.Reply{Text: "never", Stall: stall})
	bg := w.start("orchestrate", task)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := srv.WaitRequests(ctx, 2); err != nil {
		t.Fatal(err)
	}
	bg.cmd.Process.Signal(syscall.SIGINT)
	if code := bg.wait(); code != cli.ExitInterrupted {
		t.Fatalf("exit %d", code)
	}
	id := w.runs()[0].ID
	short := record.ShortID(id)
	r := w.zwarm("runs", "say", short, "use the token bucket in pkg/limit")
	if r.code != 0 || !strings.Contains(r.stdout, "is interrupted: message 1 is kept for when it is resumed") ||
		!strings.Contains(r.stderr, "resume with: zwarm orchestrate --resume "+short) {
		t.Errorf("say to a stopped run: %+v", r)
	}
	if show := w.ok("runs", "show", short); !strings.Contains(show, "1 message from you waiting: given to the model when it is resumed") {
		t.Errorf("runs show:\n%s", show)
	}
	srv.On(task, replyCalls(fcall("finish", map[string]any{"summary": "steered"})))
	out := w.ok("orchestrate", "--resume", short, "now also add metrics")
	if i, j := strings.Index(out, "you: use the token bucket"), strings.Index(out, "you: now also add metrics"); i < 0 || j < i {
		t.Errorf("resume printed:\n%s", out)
	}
	reqs := srv.Requests()
	got := userMessages(reqs[len(reqs)-1].Body)
	want := []string{"[from the user, message 1] use the token bucket in pkg/limit", "[from the user, message 2] now also add metrics"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the model saw %q", got)
	}
	// A completed run keeps a message too, and resumes for it alone.
	r = w.zwarm("runs", "say", short, "one more thing")
	if r.code != 0 || !strings.Contains(r.stdout, "is completed: message 3 is kept") {
		t.Errorf("say to a completed run: %+v", r)
	}
	srv.On(task, replyCalls(fcall("finish", map[string]any{"summary": "done again"})))
	if out := w.ok("orchestrate", "--resume", short); !strings.Contains(out, "you: one more thing") {
		t.Errorf("resume for a message:\n%s", out)
	}
	reqs = srv.Requests()
	if got := userMessages(reqs[len(reqs)-1].Body); len(got) != 3 || got[2] != "[from the user, message 3] one more thing" {
		t.Errorf("the model saw %q", got)
	}
}

// A run started in the background of an interactive shell does not read
// the terminal (that would stop it): runs answer answers it.
func TestAskInTheBackgroundWaitsForRunsAnswer(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "ASK TERM: in the background"
	srv.On(task, replyCalls(fcall("ask_user", map[string]any{"question": "Which port?"})),
		replyCalls(fcall("finish", map[string]any{"summary": "ok"})))
	// Job control puts the run in a process group of its own, not the
	// terminal's foreground one.
	p := w.interactiveProgram("sh", "-c", `set -m; "$0" orchestrate "$1" & echo "job $!"; wait $!; echo "exit $?"`, bins.zwarm, task)
	p.await("job ", 1)
	var job int
	fmt.Sscanf(p.out.String()[strings.Index(p.out.String(), "job "):], "job %d", &job)
	if job <= 0 {
		t.Fatalf("no job pid in %q", p.out.String())
	}
	// Should it be stopped all the same, it still holds the terminal: it
	// goes first (cleanups run last first).
	t.Cleanup(func() { syscall.Kill(-job, syscall.SIGKILL) })
	p.await("the run is in the background: zwarm runs answer ", 1)
	p.f.WriteString("typed for the shell\n")
	run := w.waitingRun()
	if r := w.zwarm("runs", "answer", run.ID, "8080"); r.code != 0 {
		t.Errorf("answer: %+v", r)
	}
	p.await("exit 0", 1)
	if got := outputOf(srv, "ask_user"); got != "[from the user, message 1] 8080" {
		t.Errorf("ask_user's output %q\n%s", got, p.out.String())
	}
}

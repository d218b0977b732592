package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// messagesOf are the texts of a model request's messages, "role: text".
func messagesOf(body []byte) string {
	var out []string
	for _, it := range fakemodel.Input(body) {
		if it.Type == "message" {
			out = append(out, it.Role+": "+it.Text)
		}
	}
	return strings.Join(out, "\n")
}

// requestWith is the last model request whose user text holds key.
func requestWith(t *testing.T, srv *fakemodel.Server, key string) string {
	t.Helper()
	reqs := srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if m := messagesOf(reqs[i].Body); strings.Contains(m, key) {
			return m
		}
	}
	t.Fatalf("no model request holds %q", key)
	return ""
}

// zwarm pilot on a terminal: two turns (the first delegates to a worker
// and waits for it), :history, :status and :workers, :goto 1 (the next
// model call sees the conversation rewound), Ctrl+C during a model turn
// (the turn stops, the prompt comes back), :quit; then --resume goes on
// from the checkpoints, the prompt's history kept, and Ctrl+C at the
// prompt leaves.
func TestPilotOnATerminal(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	stall := make(chan struct{})
	defer close(stall)
	srv.On("PILOT ONE", replyCalls(fcall("delegate", map[string]any{"task": "write the notes"})),
		replyCalls(fcall("wait", map[string]any{"mode": "all"})), fakemodel.Reply{Text: "ANSWER ONE"})
	srv.On("PILOT TWO", fakemodel.Reply{Text: "ANSWER TWO\nits second line"})
	srv.On("PILOT THREE", fakemodel.Reply{Text: "never sent", Stall: stall})
	srv.On("PILOT FOUR", fakemodel.Reply{Text: "ANSWER FOUR"})

	p := w.interactive("pilot")
	p.await("you> ", 1)
	p.f.WriteString(":status\r")
	p.prompted("no run yet: write what to do")
	p.f.WriteString("PILOT ONE\r")
	p.prompted("ANSWER ONE")
	p.f.WriteString("PILOT TWO\r")
	p.prompted("its second line")
	if strings.Contains(p.out.String(), "» ANSWER") {
		t.Errorf("an answer was printed clipped among the steps:\n%s", p.out.String())
	}
	run := w.runs()[0]
	short := record.ShortID(run.ID)
	if run.Status != runs.StatusRunning || run.Task != "PILOT ONE" || len(run.Workers) != 1 || run.Steps != 4 {
		t.Fatalf("the run while the pilot waits: %+v", run)
	}
	worker := record.ShortID(run.Workers[0])

	mark := len(p.out.String())
	p.f.WriteString(":history\r")
	p.prompted("» ANSWER TWO")
	p.f.WriteString(":status\r")
	p.prompted("failed or killed")
	p.f.WriteString(":workers\r")
	p.prompted("STATUS")
	shown := p.out.String()[mark:]
	for _, want := range []string{"1  you: PILOT ONE", "» ANSWER ONE", "2  you: PILOT TWO", "» ANSWER TWO",
		"run " + short + " · running · gpt-5.1 · pilot", "turn 2 · steps 4/50", "workers: 0 running, 1 done, 0 failed or killed",
		"\n" + worker + " ", "completed"} {
		if !strings.Contains(shown, want) {
			t.Errorf(":history, :status and :workers lack %q:\n%s", want, shown)
		}
	}

	p.f.WriteString(":goto 1\r")
	p.prompted("your next message is turn 2")
	if !strings.Contains(p.out.String(), "↶ went back to checkpoint 1: 2 items of turn 2 dropped from the conversation") {
		t.Errorf("the rewind was not shown:\n%s", p.out.String()[mark:])
	}
	p.f.WriteString("PILOT THREE\r")
	sessionstest.Eventually(t, "the model call of turn 2", func() bool {
		reqs := srv.Requests()
		return strings.Contains(messagesOf(reqs[len(reqs)-1].Body), "PILOT THREE")
	})
	seen := requestWith(t, srv, "PILOT THREE")
	for _, want := range []string{"user: [from the user, turn 1] PILOT ONE", "assistant: ANSWER ONE",
		"developer: [zwarm: rewound] The user went back to the end of turn 1", "user: [from the user, turn 2] PILOT THREE"} {
		if !strings.Contains(seen, want) {
			t.Errorf("the call after :goto 1 lacks %q:\n%s", want, seen)
		}
	}
	if strings.Contains(seen, "PILOT TWO") || strings.Contains(seen, "ANSWER TWO") {
		t.Errorf("the call after :goto 1 saw the dropped turn:\n%s", seen)
	}
	p.f.WriteString("\x03") // Ctrl+C while the model works
	p.prompted("turn 2 stopped before the model answered: you stopped it")
	if r := w.runs()[0]; r.Status != runs.StatusRunning {
		t.Errorf("after a stopped turn the run is %s", r.Status)
	}
	p.f.WriteString(":quit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d after :quit:\n%s", code, p.out.String())
	}
	<-p.done // all it wrote is read
	if !strings.Contains(p.out.String(), "left run "+short+" after 2 turns; resume with: zwarm pilot --resume "+short) {
		t.Errorf("no way back was shown:\n%s", p.out.String())
	}
	if r := w.runs()[0]; r.Status != runs.StatusInterrupted {
		t.Errorf("after :quit the run is %s", r.Status)
	}
	hist := filepath.Join(w.State, "pilot_history")
	if fi, err := os.Stat(hist); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the prompt's history: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(hist); !strings.Contains(string(b), "PILOT ONE\n") || !strings.HasSuffix(string(b), ":goto 1\nPILOT THREE\n:quit\n") {
		t.Errorf("the prompt's history:\n%s", b)
	}

	p = w.interactive("pilot", "--resume", short)
	p.await("you> ", 1)
	for _, want := range []string{"2  you: PILOT THREE", "(no answer)", "1 turn before it: :history lists them"} {
		if !strings.Contains(p.out.String(), want) {
			t.Errorf("the resumed pilot's recap lacks %q:\n%s", want, p.out.String())
		}
	}
	p.f.WriteString("\x1b[A") // the last line of the history
	p.await("you> :quit", 1)
	p.f.WriteString("\x01\x0b" + "PILOT FOUR\r") // Ctrl+A, Ctrl+K: the line cleared
	p.prompted("ANSWER FOUR")
	seen = requestWith(t, srv, "PILOT FOUR")
	// The model was told its turn 2 was stopped, before turn 3.
	if !strings.Contains(seen, "user: [from the user, turn 2] PILOT THREE\ndeveloper: [zwarm: stopped] Turn 2 ended before you answered: the user stopped it.") ||
		!strings.Contains(seen, "\nuser: [from the user, turn 3] PILOT FOUR") || strings.Contains(seen, "PILOT TWO") {
		t.Errorf("the resumed conversation:\n%s", seen)
	}
	p.f.WriteString("\x03") // Ctrl+C at the prompt leaves
	if code := p.wait(); code != cli.ExitInterrupted {
		t.Fatalf("exit %d after Ctrl+C at the prompt:\n%s", code, p.out.String())
	}
	<-p.done
	if !strings.Contains(p.out.String(), "left run "+short+" after 3 turns") {
		t.Errorf("no way back was shown:\n%s", p.out.String())
	}
	if r := w.runs()[0]; r.Status != runs.StatusInterrupted || r.Steps != 5 {
		t.Errorf("after the resumed pilot: %+v", r)
	}
	if r := w.zwarm("orchestrate", "--resume", short); r.code != 2 || !strings.Contains(r.stderr, "is a pilot conversation: zwarm pilot --resume "+short) {
		t.Errorf("orchestrate --resume of a pilot run: %+v", r)
	}
}

// prompted waits until the prompt shows again after the last text.
func (p *ptyRun) prompted(text string) {
	p.t.Helper()
	sessionstest.Eventually(p.t, fmt.Sprintf("the prompt after %q", text), func() bool {
		s := p.out.String()
		i := strings.LastIndex(s, text)
		return i >= 0 && strings.Contains(s[i:], "you> ")
	})
}

// pilotScript runs zwarm pilot with stdin from a script.
func (w *world) pilotScript(stdin string, args ...string) result {
	w.t.Helper()
	cmd := exec.Command(bins.zwarm, append([]string{"pilot"}, args...)...)
	cmd.Dir, cmd.Env, cmd.Stdin = w.Work, w.env(), strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return result{o.String(), e.String(), code}
}

// Without a terminal each line of stdin is a turn or a command, and the
// end of input leaves; an orchestrate run does not resume as a pilot.
func TestPilotFromAScript(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	srv.On("SCRIPT ONE", fakemodel.Reply{Text: "SAID ONE"})
	srv.On("SCRIPT TWO", fakemodel.Reply{Text: "SAID TWO"})
	r := w.pilotScript("SCRIPT TWO\n:history\n:nope\n", "SCRIPT ONE")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"task: SCRIPT ONE", "SAID ONE", "you (turn 2): SCRIPT TWO", "SAID TWO", "1  you: SCRIPT ONE", "2  you: SCRIPT TWO"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "\x1b") || strings.Contains(r.stderr, "you> ") {
		t.Errorf("a prompt or colour without a terminal:\n%q\n%q", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "unknown command :nope; :help lists them") || !strings.Contains(r.stderr, "resume with: zwarm pilot --resume ") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if show := w.ok("runs", "show", w.runs()[0].ID); !strings.Contains(show, "you (turn 2): SCRIPT TWO") || !strings.Contains(show, "» SAID TWO") {
		t.Errorf("runs show of a pilot run:\n%s", show)
	}
	srv.On("ORCH RUN", replyCalls(fcall("finish", map[string]any{"summary": "done"})))
	w.ok("orchestrate", "ORCH RUN")
	var orch runJSON
	for _, run := range w.runs() {
		if run.Task == "ORCH RUN" {
			orch = run
		}
	}
	if r := w.pilotScript("", "--resume", orch.ID); r.code != 2 || !strings.Contains(r.stderr, "is not a pilot conversation: zwarm orchestrate --resume") {
		t.Errorf("pilot --resume of an orchestrate run: %+v", r)
	}
	if r := w.pilotScript(""); r.code != 0 || len(w.runs()) != 2 {
		t.Errorf("no input makes no run: %+v", r)
	}
}

// Without a terminal, SIGINT during a turn stops the turn (the input
// then ends, and the pilot leaves with 0); SIGTERM leaves at once, with
// 130; the run is interrupted and resumable either way.
func TestPilotSignals(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	stall := make(chan struct{})
	defer close(stall)
	srv.On("SIGNAL ONE", fakemodel.Reply{Text: "never", Stall: stall})
	srv.On("SIGNAL TWO", fakemodel.Reply{Text: "never", Stall: stall})
	for _, c := range []struct {
		sig  syscall.Signal
		args []string
		code int
	}{
		{syscall.SIGINT, []string{"SIGNAL ONE"}, 0},
		{syscall.SIGTERM, nil, cli.ExitInterrupted},
	} {
		args := c.args
		if args == nil {
			args = []string{"--resume", w.runs()[0].ID, "SIGNAL TWO"}
		}
		n := len(srv.Requests())
		bg := w.start(append([]string{"pilot"}, args...)...)
		sessionstest.Eventually(t, "the turn's model call", func() bool { return len(srv.Requests()) > n })
		bg.cmd.Process.Signal(c.sig)
		if code := bg.wait(); code != c.code {
			t.Fatalf("%v: exit %d\n%s\n%s", c.sig, code, bg.stdout.String(), bg.stderr.String())
		}
		if r := w.runs()[0]; r.Status != runs.StatusInterrupted || !strings.Contains(bg.stderr.String(), "resume with: zwarm pilot --resume ") {
			t.Errorf("%v: the run is %s\n%s", c.sig, r.Status, bg.stderr.String())
		}
	}
	events := w.ok("runs", "show", w.runs()[0].ID, "--jq", `.events[] | select(.type == "turn_ended") | .reason`)
	if strings.Join(strings.Fields(events), " ") != "stopped stopped" {
		t.Errorf("turn_ended reasons: %s", events)
	}
}

// --reasoning-effort on orchestrate and pilot sets the orchestrating
// model's effort for the run, over the config; a value the API does not
// take is refused before anything runs.
func TestReasoningEffortFlag(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	srv.On("EFFORT ORCH", replyCalls(fcall("finish", map[string]any{"summary": "done"})))
	srv.On("EFFORT PILOT", fakemodel.Reply{Text: "ok"})
	w.ok("orchestrate", "--reasoning-effort", "high", "EFFORT ORCH")
	if r := w.pilotScript("EFFORT PILOT\n", "--reasoning-effort", "low"); r.code != 0 {
		t.Fatalf("pilot: exit %d\n%s", r.code, r.stderr)
	}
	var efforts []string
	for _, req := range srv.Requests() {
		var body struct {
			Reasoning *struct{ Effort string } `json:"reasoning"`
		}
		json.Unmarshal(req.Body, &body)
		if body.Reasoning != nil {
			efforts = append(efforts, body.Reasoning.Effort)
		}
	}
	if strings.Join(efforts, ",") != "high,low" {
		t.Fatalf("efforts sent: %q; want high for the run, then low for the pilot", efforts)
	}
	if r := w.zwarm("orchestrate", "--reasoning-effort", "extreme", "EFFORT ORCH"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, `reasoning_effort "extreme" is not one of minimal, low, medium, high`) {
		t.Errorf("a bad effort: %+v", r)
	}
}

// A message sent to a pilot run from elsewhere while its prompt waits is
// shown at once, the line being typed kept; the model reads it with the
// next turn.
func TestPilotShowsARunsSayAtThePrompt(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	srv.On("SAY ONE", fakemodel.Reply{Text: "ANSWER ONE"})
	srv.On("SAY TWO", fakemodel.Reply{Text: "ANSWER TWO"})
	p := w.interactive("pilot")
	p.await("you> ", 1)
	p.f.WriteString("SAY ONE\r")
	p.prompted("ANSWER ONE")
	p.f.WriteString("SAY T") // half typed when the message comes
	run := w.runs()[0]
	w.ok("runs", "say", run.ID, "use pkg/limit\x1b[31m")
	p.await("← message 1 (runs say): use pkg/limit\\x1b[31m · the model reads it with your next turn", 1)
	p.f.WriteString("WO\r")
	p.prompted("ANSWER TWO")
	seen := requestWith(t, srv, "SAY TWO")
	if !strings.Contains(seen, "use pkg/limit") {
		t.Errorf("the model did not get the message with the next turn:\n%s", seen)
	}
	if strings.Contains(p.out.String(), "\x1b[31m") {
		t.Errorf("the message's escape reached the terminal raw")
	}
	p.f.WriteString(":quit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.out.String())
	}
}

// Leaving a pilot run whose worker still runs says so, as orchestrate
// does: the worker went on unmentioned.
func TestLeavingPilotNamesTheWorkersStillRunning(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	gate := filepath.Join(t.TempDir(), "never")
	w.setScript(fakeagent.Completes("done", 100), "slow notes", []fakeagent.Step{{"wait_file": gate}})
	srv.On("PILOT LEAVE", replyCalls(fcall("delegate", map[string]any{"task": "slow notes"})), fakemodel.Reply{Text: "delegated"})
	r := w.pilotScript("PILOT LEAVE\n:quit\n")
	if r.code != 0 || !strings.Contains(r.stderr, "still running: 1 worker") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	w.zwarm("kill", "--all")
}

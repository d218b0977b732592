package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/adapters"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/orchestrator/runs"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/listing"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
	"github.com/zwarm/zwarm/sessions/state"
)

// orchWorld is a world whose orchestrator talks to a fake model server.
func orchWorld(t *testing.T) (*world, *fakemodel.Server) {
	t.Helper()
	w := newWorld(t)
	srv, err := fakemodel.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	// HOME of its own: exec_command starts login shells, which must not
	// run the machine's dotfiles (see orchestrator/shell's tests).
	w.extraEnv = append(w.extraEnv, "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY=sk-test", "HOME="+t.TempDir())
	return w, srv
}

func fcall(name string, args any) fakemodel.Call {
	b, _ := json.Marshal(args)
	return fakemodel.Call{Name: name, Args: string(b)}
}

func replyCalls(cs ...fakemodel.Call) fakemodel.Reply { return fakemodel.Reply{Calls: cs} }

// runs is zwarm runs --json.
func (w *world) runs() []runJSON {
	w.t.Helper()
	var list []runJSON
	mustJSON(w.t, w.ok("runs", "--json"), &list)
	return list
}

func TestOrchestrateUsageErrors(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	for _, c := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"orchestrate"}, nil, "no task: say what to do"},
		{[]string{"orchestrate", "--resume", "7c1e", "a new instruction"}, nil, `--resume: run "7c1e": no such run`},
		{[]string{"orchestrate", "--resume", "7c1e", "--task-file", "f", "more"}, nil, "not both"},
		{[]string{"runs", "say", "7c1e"}, nil, "say needs a run id (or unique prefix) and the message"},
		{[]string{"runs", "say", "7c1e", "hi"}, nil, `run "7c1e": no such run`},
		{[]string{"runs", "say", "../x", "hi"}, nil, "invalid run id"},
		{[]string{"runs", "answer", "7c1e", "yes"}, nil, `run "7c1e": no such run`},
		{[]string{"orchestrate", "--resume", "7c1e", "--dir", "."}, nil, "--dir cannot change it"},
		{[]string{"orchestrate", "--resume", "7c1e"}, nil, `--resume: run "7c1e": no such run`},
		{[]string{"orchestrate", "--resume", "../x"}, nil, "invalid run id"},
		{[]string{"orchestrate", "--max-steps", "0", "task"}, nil, "max_steps is 0: it must be at least 1"},
		{[]string{"orchestrate", "--dir", "/nonexistent", "task"}, nil, "--dir /nonexistent is not a directory"},
		{[]string{"orchestrate", "--task-file", "/nonexistent", ""}, nil, "--task-file: open /nonexistent"},
		{[]string{"orchestrate", "task"}, []string{"OPENAI_API_KEY=", "OPENAI_BASE_URL="}, "no API key: set OPENAI_API_KEY"},
		{[]string{"runs", "show", "abcd"}, nil, `run "abcd": no such run`},
		{[]string{"runs", "extra"}, nil, "takes no arguments"},
	} {
		saved := w.extraEnv
		w.extraEnv = append(append([]string{}, w.extraEnv...), c.env...)
		r := w.zwarm(c.args...)
		w.extraEnv = saved
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("zwarm %v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
	// A runner that does not exist, before any model call.
	os.MkdirAll(w.State, 0o700)
	writeFile(t, filepath.Join(w.State, "config.toml"), "[orchestrator]\nrunner = \"nosuch\"\n")
	if r := w.zwarm("orchestrate", "task"); r.code != 2 || !strings.Contains(r.stderr, `[orchestrator] runner: unknown runner "nosuch" (known: local, slurm)`) {
		t.Errorf("orchestrate with an unknown runner: %+v", r)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("the model was asked %d times for a run that could not delegate", n)
	}
	os.Remove(filepath.Join(w.State, "config.toml"))
	// A run whose record cannot be read is a failure, not a mistyped id.
	broken := filepath.Join(w.State, "runs", "7c1e0000-0000-4000-8000-000000000001")
	os.MkdirAll(broken, 0o700)
	writeFile(t, filepath.Join(broken, "run.json"), "{half")
	for _, args := range [][]string{{"runs", "show", "7c1e"}, {"runs", "say", "7c1e", "hi"}, {"orchestrate", "--resume", "7c1e"}} {
		if r := w.zwarm(args...); r.code != 1 || !strings.Contains(r.stderr, "run.json is not readable") {
			t.Errorf("zwarm %v of an unreadable run: %+v", args, r)
		}
	}
	os.RemoveAll(broken)
	if r := w.zwarm("runs"); r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "no runs") {
		t.Errorf("runs: %+v", r)
	}
	if out := w.ok("runs", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("runs --json: %q", out)
	}
}

func TestOrchestrateRunPrintsStepsAndRunsShowsIt(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "ORCH CLI: get it done"
	w.setScript(fakeagent.Completes("worker finished the job", 500))
	srv.On(task, replyCalls(fcall("delegate", map[string]any{"task": "do the job"})),
		fakemodel.Reply{Reasoning: "wait for it", Calls: []fakemodel.Call{fcall("wait", map[string]any{})}},
		replyCalls(fcall("finish", map[string]any{"summary": "the job is done"})))
	r := w.zwarm("orchestrate", "--max-steps", "7", task)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"task: " + task, "step 1/7 · ", "→ delegate task=\"do the job\"", "← started ", "(codex, gpt-5.1-codex-mini)",
		"· wait for it", "→ wait", "← finished: ", " completed", "completed after 3 steps", "the job is done"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stderr, "resume with") || strings.Contains(r.stderr, "\r") {
		t.Errorf("stderr %q", r.stderr)
	}
	list := w.runs()
	if len(list) != 1 || list[0].Status != runs.StatusCompleted || list[0].Steps != 3 || len(list[0].Workers) != 1 {
		t.Fatalf("runs %+v", list)
	}
	id := list[0].ID
	// Piped, the table is tab-separated.
	table := w.ok("runs")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 2 || lines[0] != "ID\tSTATUS\tSTEPS\tWORKERS\tTOKENS\tCOST\tCREATED\tTASK" ||
		!strings.HasPrefix(lines[1], id+"\tcompleted\t3/7\t1\t") || !strings.HasSuffix(lines[1], "\t"+task) {
		t.Errorf("runs table:\n%s", table)
	}
	show := w.ok("runs", "show", id[:6])
	for _, want := range []string{"run " + id + " · completed", "summary: the job is done", "→ delegate", "completed after 3 steps: the model called finish",
		"do the job", "\tcompleted\t"} {
		if !strings.Contains(show, want) {
			t.Errorf("runs show lacks %q:\n%s", want, show)
		}
	}
	var shown struct {
		Run     runJSON           `json:"run"`
		Events  []runs.Event      `json:"events"`
		Workers []cli.SessionJSON `json:"workers"`
	}
	mustJSON(t, w.ok("runs", "show", "--json", id), &shown)
	if shown.Run.ID != id || len(shown.Events) < 10 || len(shown.Workers) != 1 || shown.Workers[0].Source.String() != "run:"+id {
		t.Errorf("runs show --json: %+v", shown)
	}
}

func TestOrchestrateJSONAndLimitExit(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "ORCH JSON: never finishes"
	srv.On(task, replyCalls(fcall("list_sessions", map[string]any{})), replyCalls(fcall("list_sessions", map[string]any{})))
	r := w.zwarm("orchestrate", "--json", "--max-steps", "2", task)
	if r.code != 1 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var types []string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var ev runs.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not JSONL: %q", sc.Text())
		}
		types = append(types, string(ev.Type))
	}
	if types[0] != "run_started" || types[len(types)-1] != "run_stopped" || !strings.Contains(strings.Join(types, " "), "limit run_stopped") {
		t.Errorf("events %v", types)
	}
	id := w.runs()[0].ID
	want := fmt.Sprintf("resume with: zwarm orchestrate --resume %s --max-steps 4", record.ShortID(id))
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q lacks %q", r.stderr, want)
	}
	// Resuming without more steps is refused; with more, the run goes on.
	if r := w.zwarm("orchestrate", "--resume", id); r.code != 2 || !strings.Contains(r.stderr, "higher --max-steps") {
		t.Errorf("resume without steps: %d %q", r.code, r.stderr)
	}
	srv.On(task, replyCalls(fcall("finish", map[string]any{"summary": "finally"})))
	if out := w.ok("orchestrate", "--resume", id[:8], "--max-steps", "4"); !strings.Contains(out, "completed after 3 steps") {
		t.Errorf("resume: %s", out)
	}
	if r := w.zwarm("orchestrate", "--resume", id); r.code != 2 || !strings.Contains(r.stderr, "is completed: there is nothing to resume; give it a new instruction") {
		t.Errorf("resume of a completed run: %d %q", r.code, r.stderr)
	}
	// With a new instruction, a completed run goes on.
	srv.On(task, replyCalls(fcall("finish", map[string]any{"summary": "metrics too"})))
	if out := w.ok("orchestrate", "--resume", id, "--max-steps", "5", "now also add metrics"); !strings.Contains(out, "you: now also add metrics") ||
		!strings.Contains(out, "completed after 4 steps") {
		t.Errorf("resume with an instruction: %s", out)
	}
	reqs := srv.Requests()
	in := fakemodel.Input(reqs[len(reqs)-1].Body)
	if got := in[len(in)-2]; got.Role != "user" || got.Text != "[from the user, message 1] now also add metrics" {
		t.Errorf("the model got %+v", got)
	}
}

// The orchestrating process is SIGKILLed mid-run; its worker finishes
// while nothing runs the run; --resume carries on and is told.
func TestOrchestrateResumeAfterSIGKILL(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "ORCH KILL: survive"
	gate := filepath.Join(t.TempDir(), "gate")
	w.setScript(fakeagent.Completes("done", 100), "slow job", append([]fakeagent.Step{{"wait_file": gate}}, fakeagent.Completes("slow job done", 300)...))
	stall := make(chan struct{})
	defer close(stall)
	srv.On(task, replyCalls(fcall("delegate", map[string]any{"task": "slow job"})), fakemodel.Reply{Text: "never", Stall: stall},
		replyCalls(fcall("finish", map[string]any{"summary": "survived"})))
	cmd := exec.Command(bins.zwarm, "orchestrate", task)
	cmd.Dir, cmd.Env = w.Work, w.env()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := srv.WaitRequests(ctx, 2); err != nil {
		cmd.Process.Kill()
		t.Fatalf("%v\n%s", err, out.String())
	}
	live := w.runs()
	if len(live) != 1 || live[0].Status != runs.StatusRunning {
		t.Fatalf("while it runs: %+v", live)
	}
	if r := w.zwarm("orchestrate", "--resume", live[0].ID); r.code != 2 || !strings.Contains(r.stderr, "is running (process") {
		t.Errorf("resume of a live run: %d %q", r.code, r.stderr)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	list := w.runs()
	if len(list) != 1 || list[0].Status != runs.StatusInterrupted || !strings.Contains(list[0].StopReason, "ended without saving an outcome") {
		t.Fatalf("after SIGKILL: %+v", list)
	}
	id, worker := list[0].ID, list[0].Workers[0]
	os.WriteFile(gate, nil, 0o600)
	w.ok("wait", "--timeout", "60s", worker)
	res := w.zwarm("orchestrate", "--resume", id)
	if res.code != 0 || !strings.Contains(res.stdout, "survived") {
		t.Fatalf("resume: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	reqs := srv.Requests()
	in := fakemodel.Input(reqs[len(reqs)-1].Body)
	obs := in[len(in)-1].Text
	if !strings.Contains(obs, "has been resumed") || !strings.Contains(obs, worker+" completed") {
		t.Errorf("the first observation after resume: %s", obs)
	}
	if r := w.runs()[0]; r.Status != runs.StatusCompleted || r.Steps != 2 || r.WorkerUsage.InputTokens != 300 {
		t.Errorf("run %+v", r)
	}
}

// The orchestrator delegates to the REAL codex CLI (only the model behind
// both is fake): the worker really writes a file, and the orchestrator
// verifies it with exec_command before finish.
func TestRealCodexOrchestrated(t *testing.T) {
	t.Parallel()
	w, srv := realWorld(t, "codex")
	// HOME of its own: exec_command starts login shells, which must not
	// run the machine's dotfiles (see orchestrator/shell's tests).
	w.extraEnv = append(w.extraEnv, "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY=sk-test", "HOME="+t.TempDir())
	task := "ORCH-E2E make the greeting file"
	workerTask := "write hello from codex into greeting.txt"
	srv.On(workerTask,
		fakemodel.Reply{Reasoning: "one command will do", Tool: "exec_command", Args: `{"cmd":"printf 'hello from codex\\n' > greeting.txt"}`},
		fakemodel.Reply{Text: "greeting.txt written"})
	srv.On(task,
		replyCalls(fcall("delegate", map[string]any{"task": workerTask, "adapter": "codex"})),
		replyCalls(fcall("wait", map[string]any{"mode": "all", "timeout_s": 120})),
		replyCalls(fcall("exec_command", map[string]any{"cmd": "cat greeting.txt", "yield_time_ms": 5000, "login": false})),
		fakemodel.Reply{Dynamic: func(body []byte) fakemodel.Reply {
			// Finish only if the verification saw the file.
			outs := fakemodel.Outputs(body, "exec_command")
			if len(outs) == 0 || !strings.Contains(outs[len(outs)-1], "hello from codex") {
				return replyCalls(fcall("finish", map[string]any{"summary": "VERIFICATION FAILED"}))
			}
			return replyCalls(fcall("finish", map[string]any{"summary": "greeting.txt verified"}))
		}})
	r := w.zwarm("orchestrate", "--max-steps", "10", "--timeout", "3m", task)
	if r.code != 0 || !strings.Contains(r.stdout, "greeting.txt verified") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(w.Work, "greeting.txt")); err != nil || string(b) != "hello from codex\n" {
		t.Fatalf("greeting.txt: %q %v", b, err)
	}
	run := w.runs()[0]
	if run.Status != runs.StatusCompleted || len(run.Workers) != 1 || run.WorkerUsage.TotalTokens == 0 {
		t.Fatalf("run %+v", run)
	}
	s := w.show(run.Workers[0])
	if s.Adapter != "codex" || s.Status() != record.StatusCompleted || s.Source.String() != "run:"+run.ID ||
		!hasStep(s, "command", "command", "greeting.txt") {
		t.Fatalf("worker %s %s %s steps %v", s.Adapter, s.Status(), s.Source, s.Steps)
	}
}

// Ctrl+C stops the run, saves it and prints the command that resumes it.
func TestOrchestrateCtrlCSavesAndPrintsResume(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "ORCH CTRL-C: stop me"
	stall := make(chan struct{})
	defer close(stall)
	srv.On(task, replyCalls(fcall("list_sessions", map[string]any{})), fakemodel.Reply{Text: "never", Stall: stall})
	cmd := exec.Command(bins.zwarm, "--state-dir", w.State, "orchestrate", task)
	cmd.Dir, cmd.Env = w.Work, w.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := srv.WaitRequests(ctx, 2); err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != cli.ExitInterrupted {
		t.Fatalf("exit %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	run := w.runs()[0]
	want := fmt.Sprintf("resume with: zwarm --state-dir %s orchestrate --resume %s", w.State, record.ShortID(run.ID))
	if !strings.Contains(stderr.String(), want) || !strings.Contains(stdout.String(), "interrupted after 1 step ·") {
		t.Errorf("stdout %q\nstderr %q\nwant %q", stdout.String(), stderr.String(), want)
	}
	if run.Status != runs.StatusInterrupted || run.Steps != 1 {
		t.Errorf("run %+v", run)
	}
	if rec, err := runs.LoadRecord(w.State, run.ID); err != nil {
		t.Error(err)
	} else if rec.Owner != nil {
		t.Errorf("run.json after Ctrl+C still has an owner: %+v", rec.Owner)
	}
}

// The demo's orchestrated task runs with replay workers and prints its
// steps as zwarm orchestrate does.
func TestOrchestratedDemo(t *testing.T) {
	t.Setenv("ZWARM_REPLAY_SPEED", "40")
	stateDir, work := t.TempDir(), t.TempDir()
	st, err := state.NewStore(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	m := sessions.NewManager(sessions.ManagerOptions{Store: st, Adapters: adapters.Builtin(), SupervisorArgv: []string{bins.zwarm, supervisorCmd},
		ConfigSections: orchestratorSections})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	rec, err := runOrchestratedDemo(ctx, &cli.Streams{Out: &out, ErrOut: &out, Width: 80}, m, work, 40, &out)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != runs.StatusCompleted || len(rec.Workers) != 2 {
		t.Fatalf("record %+v", rec)
	}
	for _, want := range []string{"task: Add rate limiting to the HTTP API", "step 1/10 · ", "→ delegate task=", "→ wait mode=\"all\"",
		"→ check_session session_id=", "→ exec_command cmd=", "← exit 0 · ", "→ finish summary=", "completed after 5 steps · $", "Rate limiting is in"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	list, _ := m.List(ctx, listing.Options{Source: record.RunSource(rec.ID)})
	if len(list) != 2 || list[0].Adapter != "replay" || list[0].Status() != record.StatusCompleted {
		t.Errorf("workers %+v", list)
	}
}

// zwarm orchestrate runs the watchers: a model that calls the same tool with
// the same arguments over and over is nudged, then aborted, and says so.
func TestOrchestrateRunsTheWatchers(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "ORCH CLI: loop"
	os.MkdirAll(w.State, 0o700)
	if err := os.WriteFile(filepath.Join(w.State, "config.toml"), []byte("[watchers.progress]\nrepeats = 2\nabort_repeats = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	loop := make([]fakemodel.Reply, 8)
	for i := range loop {
		loop[i] = replyCalls(fcall("list_sessions", map[string]any{}))
	}
	srv.On(task, loop...)
	r := w.zwarm("orchestrate", "--max-steps", "8", task)
	if r.code != 1 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"watcher progress (nudge)", "failed after 3 steps", "aborted by watcher progress"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	os.WriteFile(filepath.Join(w.State, "config.toml"), []byte("[watchers.progres]\nrepeats = 2\n"), 0o600)
	if r := w.zwarm("orchestrate", task); r.code != 2 || !strings.Contains(r.stderr, "progres") {
		t.Errorf("a typo in [watchers]: exit %d %q", r.code, r.stderr)
	}
}

// A run that stops before it finishes still says what became of its
// workers' changes: what was landed, and what is left on their branches.
func TestOutcomeOfAStoppedRunListsItsWorkersChanges(t *testing.T) {
	var out, errOut bytes.Buffer
	p := newStepPrinter(&cli.Streams{Out: &out, ErrOut: &errOut, Width: 100}, &out, nil, 10, false)
	rec := &runs.Record{ID: "aed2344a-5eb7-4020-ab4b-627075cc1918", Status: runs.StatusLimited, StopReason: "the run used its 10 steps",
		Steps: 10, Changes: []runs.WorkerChange{
			{Session: "3f2a9c1d-0000-4000-8000-000000000000", Outcome: runs.ChangeLanded, Into: "main", Commit: "0123456789abcdef", Changes: "+3 -1 in 2 files", Task: "add the parser"},
			{Session: "9c1d4e2f-0000-4000-8000-000000000000", Outcome: runs.ChangeUnlanded, Branch: "zwarm/9c1d4e2f", Changes: "+1 -0 in 1 file", Task: "add tests"},
		}}
	p.outcome(rec, "zwarm orchestrate --resume aed2344a")
	got := out.String()
	for _, want := range []string{"the run used its 10 steps", "Landed:\n- 3f2a9c1d into main as 0123456789ab", "Not landed", "9c1d4e2f +1 -0 in 1 file on branch zwarm/9c1d4e2f"} {
		if !strings.Contains(got, want) {
			t.Errorf("outcome lacks %q:\n%s", want, got)
		}
	}
}

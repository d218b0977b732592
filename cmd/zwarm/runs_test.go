package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// orchestrated runs a task whose model delegates one worker, waits for it
// and finishes, and returns the run's id and its worker's.
func orchestrated(t *testing.T, w *world, srv *fakemodel.Server, task string) (run, worker string) {
	t.Helper()
	srv.On(task, replyCalls(fcall("delegate", map[string]any{"task": "do the job"})), replyCalls(fcall("wait", map[string]any{})),
		replyCalls(fcall("finish", map[string]any{"summary": "done"})))
	w.ok("orchestrate", "--max-steps", "5", task)
	runs := w.runs()
	if len(runs) != 1 || len(runs[0].Workers) != 1 {
		t.Fatalf("runs %+v", runs)
	}
	return runs[0].ID, runs[0].Workers[0]
}

// keysOf returns the sorted keys of a JSON object.
func keysOf(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not an object: %s", raw)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, " ")
}

// --json prints the documented fields of a run and nothing else; --jq
// filters it; a bad --jq is a usage error.
func TestRunsJSONIsDocumentedAndFiltered(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	id, worker := orchestrated(t, w, srv, "RUNS JSON: one worker")
	const runFields = "changes cost_usd created_at dir ended_at id isolation limits model question status steps stop_reason summary task total_cost_usd total_tokens trace_id updated_at usage worker_cost_usd worker_usage workers"
	var list []json.RawMessage
	mustJSON(t, w.ok("runs", "--json"), &list)
	if len(list) != 1 || keysOf(t, list[0]) != runFields {
		t.Fatalf("runs --json fields: %s", keysOf(t, list[0]))
	}
	var run struct {
		Limits json.RawMessage `json:"limits"`
	}
	json.Unmarshal(list[0], &run)
	if got := keysOf(t, run.Limits); got != "max_cost_usd max_steps max_tokens max_workers timeout" {
		t.Errorf("limits fields: %s", got)
	}
	if out := w.ok("runs", "--jq", ".[0].id"); out != id+"\n" {
		t.Errorf("runs --jq: %q", out)
	}
	if out := w.ok("runs", "--jq", ".[0].trace_id"); out != strings.ReplaceAll(id, "-", "")+"\n" {
		t.Errorf("the run's trace id: %q, want its id without dashes", out)
	}
	var shown map[string]json.RawMessage
	mustJSON(t, w.ok("runs", "show", id[:8], "--json"), &shown)
	if keysOf(t, mustMarshal(shown)) != "events run workers" || keysOf(t, shown["run"]) != runFields {
		t.Errorf("runs show --json: %s / %s", keysOf(t, mustMarshal(shown)), keysOf(t, shown["run"]))
	}
	var workers []map[string]any
	json.Unmarshal(shown["workers"], &workers)
	if len(workers) != 1 || workers[0]["owner"] != nil || workers[0]["source"] != "run:"+id {
		t.Errorf("runs show --json workers: %s", shown["workers"])
	}
	if out := w.ok("runs", "show", id, "--jq", ".workers[0].id"); out != worker+"\n" {
		t.Errorf("runs show --jq: %q", out)
	}
	for _, args := range [][]string{{"runs", "--jq", ".["}, {"runs", "show", id, "--jq", "nope("}, {"orchestrate", "--jq", "..[", "task"}} {
		if r := w.zwarm(args...); r.code != 2 || !strings.Contains(r.stderr, "--jq") {
			t.Errorf("%v: exit %d %q", args, r.code, r.stderr)
		}
	}
}

func mustMarshal(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// orchestrate --json prints the run's events, one a line; --jq filters
// each.
func TestOrchestrateJQFiltersEachEvent(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "ORCH JQ: list then finish"
	srv.On(task, replyCalls(fcall("list_sessions", map[string]any{})), replyCalls(fcall("finish", map[string]any{"summary": "ok"})))
	r := w.zwarm("orchestrate", "--jq", `select(.type == "tool_call") | .tool`, task)
	if r.code != 0 || r.stdout != "list_sessions\nfinish\n" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
}

// ls says who started each session, and --source run:PREFIX lists one
// run's workers.
func TestLsShowsWhoStartedEachWorker(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	id, worker := orchestrated(t, w, srv, "LS SOURCE: one worker")
	mine := w.spawn("a person's own task")
	rows := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(w.ok("ls")), "\n")[1:] {
		f := strings.Split(l, "\t")
		rows[f[0]] = f
	}
	if got := rows[worker]; len(got) != 11 || got[9] != "run:"+id {
		t.Errorf("the worker's row: %q", got)
	}
	if got := rows[mine]; len(got) != 11 || got[9] != "user" {
		t.Errorf("the person's row: %q", got)
	}
	for _, prefix := range []string{id, id[:8], id[:4]} {
		list := w.ls("--source", "run:"+prefix)
		if len(list) != 1 || list[0].ID != worker || list[0].Source.String() != "run:"+id {
			t.Errorf("ls --source run:%s: %+v", prefix, list)
		}
	}
	if list := w.ls("--source", "user"); len(list) != 1 || list[0].ID != mine {
		t.Errorf("ls --source user: %+v", list)
	}
	if r := w.zwarm("ls", "--source", "run:"+strings.Repeat("0", 8)); r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "no sessions match") {
		t.Errorf("ls --source of no run: %+v", r)
	}
	// On a terminal a worker's source is its run's short id, at 80
	// columns too.
	out, _ := w.onTerminal(80, nil, "", "ls")
	if !strings.Contains(visible(out), "SOURCE") || !strings.Contains(visible(out), "  "+record.ShortID(id)+"  ") {
		t.Errorf("on a terminal:\n%s", visible(out))
	}
}

// runs kill says what it stopped, and refuses an id that names no run.
func TestRunsKillSaysWhatItDid(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	id, _ := orchestrated(t, w, srv, "RUNS KILL: a finished run")
	if out := w.ok("runs", "kill", id[:8]); !strings.Contains(out, "nothing of it was running") {
		t.Errorf("runs kill of a finished run: %q", out)
	}
	if r := w.zwarm("runs", "kill", "ffffffff"); r.code != 2 || !strings.Contains(r.stderr, "ffffffff") {
		t.Errorf("runs kill of no run: %+v", r)
	}
}

// A run whose first model call has not ended has reported no usage: its
// cost is not known yet, "–", which is not "?" (a price zwarm lacks).
func TestARunsCostIsUnknownUntilItsFirstCallEnds(t *testing.T) {
	t.Parallel()
	w, srv := orchWorld(t)
	task := "RUNS COST: not yet"
	stall := make(chan struct{})
	defer close(stall)
	srv.On(task, fakemodel.Reply{Text: "never", Stall: stall})
	cmd := exec.Command(bins.zwarm, "--state-dir", w.State, "orchestrate", task)
	cmd.Dir, cmd.Env = w.Work, w.env()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := srv.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	table := w.ok("runs")
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Split(l, "\t"); len(f) == 8 && f[1] == "running" {
			if f[5] != "–" {
				t.Fatalf("a running run with no usage yet costs %q, want –:\n%s", f[5], table)
			}
			return
		}
	}
	t.Fatalf("no running run in:\n%s", table)
}

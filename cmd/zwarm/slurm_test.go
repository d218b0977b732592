package main

import (
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

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/runner/slurm/slurmtest"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakemodel"
)

// The Slurm runner's tests run zwarm's workers as jobs of a real one-node
// cluster (.ci/slurm/up starts it; slurmtest finds it): the job's main
// process is the supervisor, the test binary standing in for zwarm as
// everywhere in this package. Tests that drain the node run alone; the
// others run in parallel (a job queued meanwhile by another package's
// drain only waits a little).

// slurmWorld is a world whose sessions run as jobs of the test cluster.
func slurmWorld(t *testing.T, settings string) *world {
	t.Helper()
	env := slurmtest.Cluster(t)
	w := newWorld(t)
	w.extraEnv = append(w.extraEnv, env...)
	if err := os.MkdirAll(w.State, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.State, "config.toml"), "kill_grace = \"2s\"\n[runner]\nkind = \"slurm\"\n[runner.slurm]\npoll = \"300ms\"\n"+settings)
	return w
}

// logSessionLogs logs what the sessions' supervisors, setups and jobs
// wrote (supervisor.log, setup.log, slurm-*.out): what a failure on a
// cluster is read from, gone with the test's directory.
func (w *world) logSessionLogs(ids ...string) {
	w.t.Helper()
	for _, id := range ids {
		dir := filepath.Join(w.State, "sessions", id)
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".log") || strings.HasSuffix(e.Name(), ".out") {
				b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
				w.t.Logf("%s %s:\n%s", record.ShortID(id), e.Name(), b)
			}
		}
	}
}

// slurm runs a Slurm command against the world's cluster
// (slurmtest.Run).
func (w *world) slurm(name string, args ...string) string {
	w.t.Helper()
	return slurmtest.Run(w.t, w.extraEnv, name, args...)
}

// jobState is what squeue says of a job now ("" once it forgot it).
func (w *world) jobState(id string) string {
	w.t.Helper()
	cmd := exec.Command("squeue", "-h", "--states=all", "-j", id, "-o", "%T")
	cmd.Env = append(os.Environ(), w.extraEnv...)
	out, _ := cmd.Output()
	return strings.TrimSpace(string(out))
}

// holdScript is a worker that starts its thread and waits until gate
// exists, then does what after says.
func (w *world) holdScript(gate string, after ...fakeagent.Step) {
	w.setScript(append([]fakeagent.Step{fakeagent.Out(`{"type":"thread.started","thread_id":"t1"}`), {"wait_file": gate}}, after...))
}

// runningJob spawns task and returns its session and job once its agent
// runs in the job (with holdScript's worker).
func (w *world) runningJob(task string) (id, job string) {
	w.t.Helper()
	id = w.spawn(task)
	job = w.jobOf(id)
	sessionstest.Eventually(w.t, "the agent to run in the job", func() bool { return w.record(id).ThreadID == "t1" })
	return id, job
}

// jobOf is the session's current job id, once recorded.
func (w *world) jobOf(id string) string {
	w.t.Helper()
	var job string
	sessionstest.Eventually(w.t, "the job id in the record", func() bool {
		r := w.record(id)
		if r.Job != nil {
			job = r.Job.ID
		}
		return job != ""
	})
	return job
}

// A worker runs as a Slurm job from spawn to completed: the record names
// the job, the job's main process is the supervisor (its output file is in
// the session's dir), and usage is exact.
func TestSlurmWorkerRunsAsAJob(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	id := w.spawn("say hello")
	job := w.jobOf(id)
	if r := w.zwarm("wait", "--timeout", "60s", id); r.code != 0 {
		t.Fatalf("wait: %+v", r)
	}
	s := w.show(id)
	var extra struct {
		Runner string `json:"runner"`
		JobID  string `json:"job_id"`
	}
	json.Unmarshal([]byte(w.ok("show", "--json", id)), &extra)
	if s.Status() != record.StatusCompleted || s.LastMessage != "done" || s.Usage.InputTokens != 700 || s.Usage.OutputTokens != 10 {
		t.Fatalf("status %s, message %q, usage %+v", s.Status(), s.LastMessage, s.Usage)
	}
	if extra.Runner != "slurm" || extra.JobID != job {
		t.Fatalf("--json says runner %q job %q; the record says slurm %s", extra.Runner, extra.JobID, job)
	}
	outFile := filepath.Join(w.State, "sessions", id, "slurm-"+job+".out")
	fi, err := os.Stat(outFile)
	if err != nil {
		t.Fatalf("the job's output file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("the job's output file is %v; every file of a session is its owner's alone", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(outFile); strings.Contains(string(b), "error") {
		t.Fatalf("the job's output has errors:\n%s", b)
	}
	if out := w.ok("show", id); !strings.Contains(out, "slurm job "+job) {
		t.Fatalf("show does not name the job:\n%s", out)
	}
	sessionstest.Eventually(t, "the job to end", func() bool { st := w.jobState(job); return st == "COMPLETED" || st == "" })
}

// A job the cluster cannot run yet is the session pending, with the step
// saying so in the scheduler's words; once the node takes jobs again it
// runs and completes.
func TestSlurmQueuedJobIsPendingThenRuns(t *testing.T) {
	// A first event due a second after a turn starts: time in the queue
	// is no time running, so the queued job is never stalled.
	w := slurmWorld(t, "[watchers.stall]\nenabled = true\nfirst_event = \"1s\"\n")
	env := slurmtest.Cluster(t)
	slurmtest.Drain(t, env)
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			slurmtest.Resume(t, env)
		}
	})
	id := w.spawn("wait your turn")
	job := w.jobOf(id)
	var queued session
	var state string
	sessionstest.Eventually(t, "ls to say the job is queued", func() bool {
		list := w.lsRaw("--json")
		for _, s := range list {
			if s.ID == id {
				queued, state = s.session, s.RunnerState
			}
		}
		return strings.HasPrefix(state, "queued · slurm "+job+" (")
	})
	if queued.Status() != record.StatusPending {
		t.Fatalf("a queued job's session is %s, want pending", queued.Status())
	}
	if out := w.ok("show", id); !strings.Contains(out, "runner   queued · slurm "+job+" (") {
		t.Fatalf("show does not say the job is queued:\n%s", out)
	}
	time.Sleep(2 * time.Second) // past first_event, in the queue
	if out, _ := w.onTerminal(160, nil, "", "ls"); strings.Contains(out, "stalled") || !strings.Contains(out, "queued · slurm "+job) {
		t.Fatalf("ls on a terminal, the job queued past first_event:\n%s", out)
	}
	// A follow-up waits for the task, which has not started.
	if out := w.ok("inject", id, "and then this"); !strings.Contains(out, "queued behind the task, which has not started yet") {
		t.Fatalf("inject to a queued job: %s", out)
	}
	slurmtest.Resume(t, env)
	resumed = true
	if r := w.zwarm("wait", "--timeout", "60s", id); r.code != 0 {
		t.Fatalf("wait after the node came back: %+v", r)
	}
	if s := w.show(id); s.Status() != record.StatusCompleted || len(s.Turns) != 2 {
		t.Fatalf("after the node came back: %s %q, %d turns (want the task and the follow-up)", s.Status(), s.Error, len(s.Turns))
	}
}

// lsEntry is ls --json's session with what the runner said.
type lsEntry struct {
	session
	RunnerState string `json:"runner_state"`
}

func (w *world) lsRaw(args ...string) []lsEntry {
	w.t.Helper()
	var list []lsEntry
	if err := json.Unmarshal([]byte(w.ok(append([]string{"ls"}, args...)...)), &list); err != nil {
		w.t.Fatal(err)
	}
	return list
}

// Kill cancels a queued job at once, and stops a running one through the
// scheduler: the session is killed, the job is gone and nothing of it
// runs.
func TestSlurmKillOfQueuedAndRunningJobs(t *testing.T) {
	w := slurmWorld(t, "")
	env := slurmtest.Cluster(t)
	gate := filepath.Join(t.TempDir(), "never")
	w.holdScript(gate, fakeagent.Completes("late", 1)...)
	// In a repository: each worker has a worktree, made once its job runs.
	w.initRepo(map[string]string{"a": "a\n"})

	slurmtest.Drain(t, env)
	queued := w.spawn("queued")
	qjob := w.jobOf(queued)
	// In the queue, its worktree is not being made: it is once the job runs.
	if out := w.ok("show", queued); !strings.Contains(out, "none yet: the worktree is made once its job runs") || strings.Contains(out, "being made") {
		slurmtest.Resume(t, env)
		t.Fatalf("show of a queued worker:\n%s", out)
	}
	r := w.zwarm("kill", queued)
	slurmtest.Resume(t, env)
	if r.code != 0 {
		t.Fatalf("kill of a queued job: %+v", r)
	}
	if s := w.show(queued); s.Status() != record.StatusKilled {
		t.Fatalf("a killed queued job's session is %s %q", s.Status(), s.Error)
	}
	if st := w.jobState(qjob); st == "PENDING" || st == "RUNNING" {
		t.Fatalf("the killed queued job is still %s", st)
	}
	// Its worktree was never made: it says so, not "being made" for ever.
	if out := w.ok("show", queued); !strings.Contains(out, "none: the session ended before its worktree was made") ||
		strings.Count(out, "before its worktree was made") != 1 {
		t.Fatalf("show of a worker killed before its worktree was made:\n%s", out)
	}
	if d := w.zwarm("diff", queued); d.code != 0 || strings.Contains(d.stderr, "being made") {
		t.Fatalf("diff of a worker killed before its worktree was made: %+v", d)
	}

	running, rjob := w.runningJob("running")
	if r := w.zwarm("kill", running); r.code != 0 {
		t.Fatalf("kill of a running job: %+v", r)
	}
	s := w.show(running)
	if s.Status() != record.StatusKilled || s.Error != "killed by zwarm kill" {
		t.Fatalf("a killed running job's session is %s %q", s.Status(), s.Error)
	}
	if st := w.jobState(rjob); st == "PENDING" || st == "RUNNING" || st == "COMPLETING" {
		t.Fatalf("the killed job is still %s", st)
	}
	// Stopped as asked, its supervisor ends the job well: a kill reads
	// as no failure in the cluster's accounting and mail.
	sessionstest.Eventually(t, "the killed job to end", func() bool { return w.jobState(rjob) != "COMPLETING" })
	if st := w.jobState(rjob); st != "COMPLETED" && st != "" {
		t.Fatalf("the job of a worker zwarm kill stopped ended %s", st)
	}
	if left := sessionstest.MarkedProcs(running); len(left) > 0 {
		t.Fatalf("processes of the killed job still run: %v", left)
	}
}

// A follow-up to a settled session is a new job, which resumes the
// agent's thread.
func TestSlurmFollowUpIsANewJob(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	id := w.spawn("first")
	first := w.jobOf(id)
	if r := w.zwarm("wait", "--timeout", "60s", id); r.code != 0 {
		t.Fatalf("wait: %+v", r)
	}
	if r := w.zwarm("inject", "--wait", id, "and then"); r.code != 0 {
		t.Fatalf("inject --wait: %+v", r)
	}
	rec := w.record(id)
	if rec.Job == nil || rec.Job.ID == first || rec.Job.ID == "" {
		t.Fatalf("the follow-up ran as job %+v; the first was %s", rec.Job, first)
	}
	if rec.Status() != record.StatusCompleted || len(rec.Turns) != 2 || !rec.Turns[1].Resumed {
		t.Fatalf("after the follow-up: %s, %d turns, %+v", rec.Status(), len(rec.Turns), rec.Turns)
	}
	outs, _ := filepath.Glob(filepath.Join(w.State, "sessions", id, "slurm-*.out"))
	if len(outs) != 2 {
		t.Fatalf("want one output file per job, got %v", outs)
	}
}

// A job cancelled from outside zwarm is recorded as such, not as a
// supervisor that died or a zwarm kill.
func TestSlurmCancelledFromOutside(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	gate := filepath.Join(t.TempDir(), "never")
	w.holdScript(gate)
	id, job := w.runningJob("hold")
	w.slurm("scancel", job)
	r := w.zwarm("wait", "--timeout", "60s", id)
	s := w.show(id)
	if r.code != 1 || s.Status() != record.StatusKilled || s.Error != "cancelled by slurm (job "+job+")" {
		w.logSessionLogs(id)
		t.Fatalf("wait exit %d; the session is %s %q", r.code, s.Status(), s.Error)
	}
	if left := sessionstest.MarkedProcs(id); len(left) > 0 {
		t.Fatalf("processes of the cancelled job still run: %v", left)
	}
}

// Settings that would make jobs zwarm cannot follow are refused before
// anything runs (exit 2), naming the setting.
func TestSlurmSettingsRefused(t *testing.T) {
	t.Parallel()
	for settings, want := range map[string]string{
		"extra_args = [\"--requeue\"]\n":      "extra_args: --requeue is zwarm's to set",
		"extra_args = [\"--output=/x/%j\"]\n": "extra_args: --output=/x/%j is zwarm's to set",
		"extra_args = [\"-Jname\"]\n":         "extra_args: -Jname is zwarm's to set",
		// sbatch takes a long option's unambiguous start for it.
		"extra_args = [\"--no-req\"]\n":    "extra_args: --no-req is zwarm's to set (--no-requeue",
		"extra_args = [\"--out=/x/%j\"]\n": "extra_args: --out=/x/%j is zwarm's to set (--output",
		"time = \"xyz\"\n":                 "[runner.slurm] time = \"xyz\": want a time as sbatch --time takes it",
		"mem = \"lots\"\n":                 "[runner.slurm] mem = \"lots\": want memory",
		"cpus = -1\n":                      "cpus = -1",
		"poll = \"1ms\"\n":                 "poll = \"1ms\": at least 250ms",
	} {
		w := slurmWorld(t, "")
		writeFile(t, filepath.Join(w.State, "config.toml"), "[runner]\nkind = \"slurm\"\n[runner.slurm]\n"+settings)
		r := w.zwarm("spawn", "refused")
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("%q: %+v; want exit 2 saying %q", settings, r, want)
		}
		if ids := w.IDs(); len(ids) != 0 {
			t.Errorf("%q: a refused spawn left sessions: %v", settings, ids)
		}
	}
}

// [runner.slurm] time takes what a role's and --slurm-time take: a
// duration is asked of sbatch in minutes.
func TestSlurmSettingsTimeIsADuration(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "time = \"2h\"\n")
	w.holdScript(filepath.Join(t.TempDir(), "never"))
	id := w.spawn("two hours")
	job := w.jobOf(id)
	defer w.zwarm("kill", id)
	if out := w.slurm("scontrol", "show", "job", job); !strings.Contains(out, "TimeLimit=02:00:00") {
		t.Fatalf("the job of time = \"2h\":\n%s", out)
	}
}

// A job sbatch refuses fails the spawn with sbatch's own words, exit 1,
// and leaves no session behind.
func TestSlurmRefusedJobLeavesNothing(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "partition = \"no-such-partition\"\n")
	r := w.zwarm("spawn", "refused")
	if r.code != 1 || !strings.Contains(r.stderr, "sbatch") || !strings.Contains(strings.ToLower(r.stderr), "partition") {
		t.Fatalf("spawn on a bad partition: %+v", r)
	}
	if ids := w.IDs(); len(ids) != 0 {
		t.Fatalf("a refused spawn left sessions: %v", ids)
	}
}

// The real Codex CLI, against the fake model, as a Slurm job: a command it
// runs makes a file in the worker's dir, usage is exact, and a follow-up
// is a new job that resumes the same thread.
func TestSlurmRealCodex(t *testing.T) {
	t.Parallel()
	env := slurmtest.Cluster(t)
	w, srv := realWorld(t, "codex")
	w.extraEnv = append(w.extraEnv, env...)
	cfg, err := os.ReadFile(filepath.Join(w.State, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.State, "config.toml"), string(cfg)+"[runner]\nkind = \"slurm\"\n[runner.slurm]\npoll = \"300ms\"\n")
	a := realAgentKinds[0]
	srv.On("create the file",
		fakemodel.Reply{Tool: a.tool, Args: a.args("echo hello > made.txt && echo created")},
		fakemodel.Reply{Text: "made the file", InputTokens: 700, CachedTokens: 100, OutputTokens: 20})
	srv.On("and then", fakemodel.Reply{Text: "second answer"})
	var s session
	mustJSON(t, w.ok("spawn", "--wait", "--json", "create the file"), &s)
	if s.Status() != record.StatusCompleted || s.LastMessage != "made the file" || s.ThreadID == "" {
		t.Fatalf("status %s message %q thread %q error %q", s.Status(), s.LastMessage, s.ThreadID, s.Error)
	}
	first := w.record(s.ID).Job
	if first == nil || first.Runner != "slurm" || first.ID == "" {
		t.Fatalf("the session ran under %+v", first)
	}
	if b, err := os.ReadFile(filepath.Join(w.Work, "made.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("made.txt: %q %v", b, err)
	}
	if u := s.Usage; u.InputTokens != 800 || u.CachedInputTokens != 100 || u.OutputTokens != 30 {
		t.Fatalf("usage %+v", u)
	}
	if out := w.ok("inject", "--wait", s.ID, "and then"); !strings.Contains(out, "second answer") {
		t.Fatalf("inject --wait: %q", out)
	}
	rec := w.record(s.ID)
	if rec.ThreadID != s.ThreadID || len(rec.Turns) != 2 || !rec.Turns[1].Resumed || rec.Job.ID == first.ID {
		t.Fatalf("after the follow-up: thread %q (was %q), turns %+v, job %+v (first %s)", rec.ThreadID, s.ThreadID, rec.Turns, rec.Job, first.ID)
	}
}

// doctor checks the configured runner: the controller answers, or it says
// it does not and fails.
func TestSlurmDoctor(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	slurmtest.Undrained(t, slurmtest.Cluster(t)) // doctor checks a node can run a job
	r := w.bin("doctor")
	if !strings.Contains(r.stdout, "runner") || !strings.Contains(r.stdout, "slurm: the controller answers") {
		t.Fatalf("doctor with the cluster up: %+v", r)
	}
	bad := filepath.Join(t.TempDir(), "slurm.conf")
	writeFile(t, bad, "ClusterName=gone\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\nAuthType=auth/munge\n")
	w.extraEnv = append(w.extraEnv, "SLURM_CONF="+bad)
	r = w.bin("doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "✗ runner") {
		t.Fatalf("doctor with the controller gone: %+v", r)
	}
}

// A job at its time limit: Slurm's warning (SIGUSR1, a minute before the
// limit; here the limit is one minute, so at once) has the supervisor
// stop the agent and record why, before the scheduler kills the job.
// Slurm looks at time limits every 30 s, so this takes up to a minute.
func TestSlurmTimeLimit(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "time = \"1\"\n")
	gate := filepath.Join(t.TempDir(), "never")
	w.holdScript(gate)
	id := w.spawn("take too long")
	job := w.jobOf(id)
	r := w.zwarm("wait", "--timeout", "3m", id)
	s := w.show(id)
	if r.code != 1 || s.Status() != record.StatusKilled || s.Error != "stopped ahead of the time limit of its slurm job "+job+", at Slurm's warning a minute before it" {
		w.logSessionLogs(id)
		t.Fatalf("wait exit %d; the session is %s %q", r.code, s.Status(), s.Error)
	}
	if left := sessionstest.MarkedProcs(id); len(left) > 0 {
		t.Fatalf("processes of the job still run: %v", left)
	}
}

// Fifty workers submitted at once are all listed as soon as their spawns
// return, and settle right; however many run, following them costs at
// most one squeue call per poll interval (counted by a squeue on PATH
// that logs each call and runs the real one).
func TestSlurmFiftyWorkers(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	calls := filepath.Join(t.TempDir(), "calls")
	// Each call is logged with its arguments: the jobs' supervisors ask
	// squeue for their own time left (-o %L) as they start, and those
	// calls are not the wait's.
	w.wrapOnPath("squeue", "echo \"call $*\" >> '"+calls+"'\nexec '%s' \"$@\"")
	gate := filepath.Join(t.TempDir(), "go")
	w.holdScript(gate, fakeagent.Completes("done", 5)...)

	const n = 50
	var wg sync.WaitGroup
	results := make([]result, n)
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = w.exec(w.Work, w.env(), []string{"spawn", "--", fmt.Sprintf("worker %d", i)})
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("spawn %d: %+v", i, r)
		}
	}
	listed := w.lsRaw("--json")
	slurmJobs := 0
	for _, s := range listed {
		if r := w.record(s.ID); r.Job != nil && r.Job.Runner == "slurm" {
			slurmJobs++
		}
	}
	if len(listed) != n || slurmJobs != n {
		t.Fatalf("right after the spawns ls lists %d sessions, %d of them Slurm jobs; want %d", len(listed), slurmJobs, n)
	}

	os.Remove(calls)
	waiting := exec.Command(bins.zwarm, "wait", "--all", "--timeout", "3m")
	waiting.Dir, waiting.Env = w.Work, w.env()
	began := time.Now()
	if err := waiting.Start(); err != nil {
		t.Fatal(err)
	}
	// The wait follows fifty running jobs over a few of its polls (each
	// a call of the squeue on PATH) before they are let finish.
	sessionstest.Eventually(t, "wait --all to call squeue three times while fifty jobs run", func() bool {
		return waitCalls(calls) >= 3
	})
	touch(t, gate)
	err := waiting.Wait()
	elapsed := time.Since(began)
	if err != nil {
		t.Fatalf("wait --all: %v", err)
	}
	made := waitCalls(calls)
	if allowed := int(elapsed/(300*time.Millisecond)) + 2; made > allowed || made == 0 {
		t.Fatalf("wait --all made %d squeue calls in %s with a 300ms poll; at most %d allowed, and some needed", made, elapsed, allowed)
	}
	for _, s := range w.lsRaw("--json") {
		if s.Status() != record.StatusCompleted {
			t.Fatalf("session %s settled %s %q", s.ID, s.Status(), s.Error)
		}
	}
	t.Logf("%d workers: wait --all made %d squeue calls in %s", n, made, elapsed.Round(time.Millisecond))
}

// With the controller out of reach, ls and show still answer from the
// records, say the runner is unreachable and conclude nothing: a running
// worker is not reported dead. Once it answers again, the session is
// followed to its end. (The shared test cluster is not stopped: the
// commands are pointed at a controller that is not there.)
func TestSlurmControllerOutOfReach(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	gate := filepath.Join(t.TempDir(), "go")
	w.holdScript(gate, fakeagent.Completes("done", 5)...)
	id, job := w.runningJob("hold")
	good := w.extraEnv
	gone := filepath.Join(t.TempDir(), "slurm.conf")
	// The same cluster, its controller gone: another cluster's name would
	// make the job another's to judge.
	writeFile(t, gone, "ClusterName=zwarm\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\nAuthType=auth/munge\n")
	w.extraEnv = append(append([]string{}, good...), "SLURM_CONF="+gone)
	shown := w.bin("show", id)
	listed := w.bin("ls", "--json")
	rec := w.record(id)
	w.extraEnv = good // from here on the cluster answers, the cleanup's kill too
	if shown.code != 0 || !strings.Contains(shown.stdout, "running") || !strings.Contains(shown.stdout, "slurm unreachable") {
		t.Fatalf("show with the controller out of reach: %+v", shown)
	}
	if listed.code != 0 || !strings.Contains(listed.stdout, `"runner_state": "slurm unreachable`) || !strings.Contains(listed.stdout, `"status": "running"`) {
		t.Fatalf("ls --json with the controller out of reach: %+v", listed)
	}
	if rec.Status() != record.StatusRunning {
		t.Fatalf("the record of a worker whose controller is out of reach became %s %q", rec.Status(), rec.Error)
	}
	touch(t, gate)
	if r := w.zwarm("wait", "--timeout", "60s", id); r.code != 0 {
		t.Fatalf("wait once the controller answers: %+v", r)
	}
	if s := w.show(id); s.Status() != record.StatusCompleted || w.record(id).Job.ID != job {
		t.Fatalf("after the controller came back: %s %q", s.Status(), s.Error)
	}
	// A follow-up sent while the controller is gone is not delivered (1),
	// and costs the worker nothing: it stays completed, its work whole.
	w.extraEnv = append(append([]string{}, good...), "SLURM_CONF="+gone)
	r := w.zwarm("inject", id, "more")
	w.extraEnv = good
	if r.code != 1 || !strings.Contains(r.stderr, "not delivered") {
		t.Fatalf("inject with the controller out of reach: %+v", r)
	}
	if s := w.show(id); s.Status() != record.StatusCompleted || s.Error != "" || len(s.Turns) != 1 {
		t.Fatalf("after a follow-up that could not be submitted: %s %q, %d turns", s.Status(), s.Error, len(s.Turns))
	}
	if inbox := w.ok("show", "--json", "--jq", ".inbox[].state", id); strings.TrimSpace(inbox) != "undelivered" {
		t.Fatalf("the follow-up is recorded %q", inbox)
	}
}

// [orchestrator] runner sends a run's workers to the cluster while a
// worker spawned by hand stays on this machine.
func TestSlurmOrchestratedWorkers(t *testing.T) {
	t.Parallel()
	w, srv := slurmOrchWorld(t)
	task := "SLURM ORCH: get it done"
	w.setScript(fakeagent.Completes("worker finished the job", 500))
	srv.On(task, replyCalls(fcall("delegate", map[string]any{"task": "do the job", "slurm": map[string]any{"time": "20m", "cpus": 2}})),
		replyCalls(fcall("wait", map[string]any{})),
		replyCalls(fcall("finish", map[string]any{"summary": "the job is done"})))
	if r := w.zwarm("orchestrate", "--max-steps", "7", task); r.code != 0 {
		t.Fatalf("orchestrate: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	local := w.spawn("by hand")
	var worker string
	for _, id := range w.IDs() {
		if id != local {
			worker = id
		}
	}
	rec := w.record(worker)
	if rec.Job == nil || rec.Job.Runner != "slurm" || rec.Job.ID == "" || rec.Status() != record.StatusCompleted {
		t.Fatalf("the run's worker ran under %+v and is %s %q", rec.Job, rec.Status(), rec.Error)
	}
	if rec := w.record(local); rec.Job != nil {
		t.Fatalf("a worker spawned by hand ran under %+v, want this machine", rec.Job)
	}
	// What the model asked of the cluster for its worker, the job asked.
	if got := strings.TrimSpace(w.slurm("squeue", "-h", "--states=all", "-j", rec.Job.ID, "-O", "TimeLimit:0|,NumCPUs:0|")); got != "20:00|2|" {
		t.Fatalf("the delegated worker's job: time limit and CPUs %q, want 20:00 and 2 as delegate asked", got)
	}
}

// slurmOrchWorld is an orchestrator's world whose runs' workers run on the
// test cluster ([orchestrator] runner = "slurm").
func slurmOrchWorld(t *testing.T) (*world, *fakemodel.Server) {
	t.Helper()
	env := slurmtest.Cluster(t)
	w, srv := orchWorld(t)
	w.extraEnv = append(w.extraEnv, env...)
	if err := os.MkdirAll(w.State, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.State, "config.toml"), "[orchestrator]\nrunner = \"slurm\"\n[runner.slurm]\npoll = \"300ms\"\n")
	return w, srv
}

// A job that starts before the command that submitted it has recorded its
// id (a slow sbatch, or a spawn killed right after submitting): readers
// meanwhile conclude nothing from the supervisor's pid, which is another
// host's, and the supervisor records its job itself.
func TestSlurmJobRunsBeforeItsIDIsRecorded(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	// sbatch answers, and the agent finishes, only when the test says.
	answer, finish := filepath.Join(t.TempDir(), "answer"), filepath.Join(t.TempDir(), "finish")
	w.slowSbatch(answer)
	t.Cleanup(func() { os.WriteFile(finish, nil, 0o600) })
	w.setScript(append([]fakeagent.Step{fakeagent.Out(`{"type":"thread.started","thread_id":"t1"}`), {"wait_file": finish}}, fakeagent.Completes("done", 5)...))

	spawning := exec.Command(bins.zwarm, "spawn", "--", "slow sbatch")
	spawning.Dir, spawning.Env = w.Work, w.env()
	if err := spawning.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	sessionstest.Eventually(t, "the job's supervisor to claim the session", func() bool {
		ids := w.IDs()
		if len(ids) == 1 {
			id = ids[0]
			r := w.record(id)
			return r.Owner != nil && r.Owner.Role == "supervisor"
		}
		return false
	})
	w.bin("ls") // a reader while the job runs and spawn has not recorded it
	if r := w.record(id); r.Status() != record.StatusRunning && r.Status() != record.StatusPending {
		t.Fatalf("a reader judged the job before its id was recorded: the session is %s %q, want running or pending", r.Status(), r.Error)
	}
	spawning.Process.Kill() // killed before it records the job
	spawning.Wait()
	touch(t, answer) // the orphaned sbatch may go
	touch(t, finish)
	if r := w.zwarm("wait", "--timeout", "60s", id); r.code != 0 {
		t.Fatalf("wait: %+v (%q)", r, w.record(id).Error)
	}
	if rec := w.record(id); rec.Status() != record.StatusCompleted || rec.Job == nil || rec.Job.ID == "" {
		t.Fatalf("the session is %s %q, job %+v", rec.Status(), rec.Error, rec.Job)
	}
}

// A suspended job shows as such, and a kill of it does not hang on a
// signal Slurm cannot deliver: the job is ended by force.
func TestSlurmKillOfASuspendedJob(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	gate := filepath.Join(t.TempDir(), "never")
	w.holdScript(gate)
	id, job := w.runningJob("hold")
	recorded, _ := os.ReadFile(filepath.Join(w.State, "sessions", id, "cgroup"))
	cgroup := strings.TrimSpace(string(recorded))
	w.slurm("scontrol", "suspend", job)
	defer func() {
		if st := w.jobState(job); st == "SUSPENDED" {
			w.slurm("scontrol", "resume", job)
		}
	}()
	sessionstest.Eventually(t, "show to say the job is suspended", func() bool {
		return strings.Contains(w.ok("show", id), "slurm "+job+" on ") && strings.Contains(w.ok("show", id), "(suspended)")
	})
	r := w.zwarm("kill", id)
	s := w.show(id)
	if r.code != 0 || s.Status() != record.StatusKilled {
		t.Fatalf("kill of a suspended job: %+v; the session is %s %q", r, s.Status(), s.Error)
	}
	if st := w.jobState(job); st == "SUSPENDED" || st == "RUNNING" {
		t.Fatalf("the killed job is still %s", st)
	}
	sessionstest.Eventually(t, "the job's processes to go", func() bool { return len(sessionstest.MarkedProcs(id)) == 0 })
	// Its supervisor was ended by force: what it left on this host (the
	// job ran here), its cgroup included, is gone too.
	if cgroup != "" {
		if _, err := os.Stat(cgroup); err == nil {
			t.Fatalf("the session's cgroup %s is left behind", cgroup)
		}
	}
}

// A job suspended while one of its processes holds the session's lock
// (its supervisor writing the record, as it does all the time; here its
// agent, to make the moment certain) leaves the record locked for as long
// as it stays suspended. A kill waits lock_timeout for it, then ends the
// job by force, which frees the lock, and records the kill with why.
func TestSlurmKillOfASuspendedJobHoldingTheLock(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	writeFile(t, filepath.Join(w.State, "config.toml"), "lock_timeout = \"2s\"\nkill_grace = \"2s\"\n[runner]\nkind = \"slurm\"\n[runner.slurm]\npoll = \"300ms\"\n")
	dir := t.TempDir()
	grab, held, gate := filepath.Join(dir, "grab"), filepath.Join(dir, "held"), filepath.Join(dir, "never")
	lock := filepath.Join(w.State, "sessions", "$ZWARM_SESSION_ID", ".lock")
	w.holdScript(grab, fakeagent.Run(fmt.Sprintf(`(flock -x "%s" sh -c 'touch "%s"; exec sleep 600') >/dev/null 2>&1 &`, lock, held)),
		fakeagent.Step{"wait_file": gate})
	id, job := w.runningJob("hold the lock")
	touch(t, grab)
	sessionstest.Eventually(t, "the agent to hold the session's lock", func() bool { _, err := os.Stat(held); return err == nil })
	w.slurm("scontrol", "suspend", job)
	defer func() {
		if st := w.jobState(job); st == "SUSPENDED" {
			w.slurm("scontrol", "resume", job)
		}
	}()
	r := w.zwarm("kill", id)
	s := w.show(id)
	if r.code != 0 || s.Status() != record.StatusKilled || !strings.Contains(s.Error, "stayed locked") || !strings.Contains(s.Error, "ended by force") {
		t.Fatalf("kill of a suspended job holding the lock: %+v; the session is %s %q", r, s.Status(), s.Error)
	}
	if !strings.Contains(r.stderr, "stayed locked past lock_timeout; ending its slurm job "+job+" by force") {
		t.Errorf("kill said nothing of ending the job by force:\n%s", r.stderr)
	}
	if st := w.jobState(job); st == "SUSPENDED" || st == "RUNNING" {
		t.Fatalf("the killed job is still %s", st)
	}
	sessionstest.Eventually(t, "the job's processes to go", func() bool { return len(sessionstest.MarkedProcs(id)) == 0 })
}

// slowSbatch puts an sbatch on the world's PATH that submits the job at
// once (the real sbatch) but answers only once answer exists: a
// controller slow to answer, for as long as the test needs. The test's
// end lets it answer, should the test not have.
func (w *world) slowSbatch(answer string) {
	w.t.Helper()
	w.t.Cleanup(func() { os.WriteFile(answer, nil, 0o600) })
	w.wrapOnPath("sbatch", "out=$('%s' \"$@\") || exit $?\nwhile [ ! -e '"+percentSafe(answer)+"' ]; do sleep 0.05; done\necho \"$out\"")
}

// wrapOnPath puts first on the world's PATH a script named name that runs
// body, where %s stands for the real name's path: the real command, with
// something around it (a count of its calls, a delay).
func (w *world) wrapOnPath(name, body string) {
	w.t.Helper()
	real, err := exec.LookPath(name)
	if err != nil {
		w.t.Fatal(err)
	}
	shim := w.t.TempDir()
	writeFile(w.t, filepath.Join(shim, name), "#!/bin/sh\n"+fmt.Sprintf(body, real)+"\n")
	if err := os.Chmod(filepath.Join(shim, name), 0o755); err != nil {
		w.t.Fatal(err)
	}
	w.extraEnv = append(w.extraEnv, "PATH="+shim+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// orGone is a job state as squeue gives it, "gone" once it forgot the job.
func orGone(state string) string {
	if state == "" {
		return "gone"
	}
	return state
}

// percentSafe is path as a wrapOnPath body may hold it: its body is a
// format, where %s is the real command.
func percentSafe(path string) string { return strings.ReplaceAll(path, "%", "%%") }

// Ctrl+C while sbatch is submitting does not lose the job: the submission
// finishes, the session is recorded with its job and runs to its end.
func TestSlurmInterruptedSpawnKeepsItsJob(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	// An sbatch that says it has started, then submits the job and is
	// slow to answer.
	started := filepath.Join(t.TempDir(), "sbatch-started")
	w.wrapOnPath("sbatch", "touch '"+percentSafe(started)+"'\nout=$('%s' \"$@\") || exit $?\nsleep 3\necho \"$out\"")
	spawning := exec.Command(bins.zwarm, "spawn", "--", "interrupted")
	spawning.Dir, spawning.Env = w.Work, w.env()
	var out strings.Builder
	spawning.Stdout = &out
	if err := spawning.Start(); err != nil {
		t.Fatal(err)
	}
	sessionstest.Eventually(t, "the session to be recorded", func() bool { return len(w.IDs()) == 1 })
	sessionstest.Eventually(t, "spawn to run sbatch (the sbatch on PATH touches "+started+" as it starts)", func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	spawning.Process.Signal(syscall.SIGINT)
	exited := make(chan error, 1)
	go func() { exited <- spawning.Wait() }()
	select {
	case <-exited:
	case <-time.After(time.Minute):
		spawning.Process.Kill()
		<-exited
		t.Fatalf("the spawn interrupted while sbatch ran had not ended a minute later; it printed %q", out.String())
	}
	ids := w.IDs()
	if len(ids) != 1 {
		t.Fatalf("after the interrupted spawn: sessions %v (stdout %q)", ids, out.String())
	}
	if r := w.zwarm("wait", "--timeout", "60s", ids[0]); r.code != 0 {
		t.Fatalf("wait: %+v (%q)", r, w.record(ids[0]).Error)
	}
	if rec := w.record(ids[0]); rec.Job == nil || rec.Job.ID == "" || rec.Status() != record.StatusCompleted {
		t.Fatalf("the session is %s %q, job %+v", rec.Status(), rec.Error, rec.Job)
	}
}

// An interrupt reaches a supervisor running as a Slurm job through the
// record on the shared file system (nothing is signalled through the
// scheduler): the turn stops, recorded interrupted, and the follow-up
// runs next in the same thread. A person then attaches to the settled
// session on this host: while attached its ended job is not taken for a
// dead owner, and leaving the CLI settles it again. It runs alone: its
// job holds a CPU of the test cluster's one node for a while.
func TestSlurmInterruptAndAttach(t *testing.T) {
	w := slurmWorld(t, "")
	// The person's CLI stays until the test has looked at the session
	// while attached.
	leave := filepath.Join(t.TempDir(), "leave")
	t.Cleanup(func() { os.WriteFile(leave, nil, 0o600) })
	w.setScript(fakeagent.Completes("went the short way", 20), "the long way", []fakeagent.Step{
		fakeagent.Out(`{"type":"thread.started","thread_id":"$THREAD"}`), fakeagent.Out(`{"type":"turn.started"}`),
		{"wait_file": filepath.Join(t.TempDir(), "never")},
	}, fakeThread, []fakeagent.Step{fakeagent.Out("the person's CLI"), {"wait_file": leave}})
	id := w.spawn("the long way")
	sessionstest.Eventually(w.t, "the agent to run in the job", func() bool { return w.record(id).ThreadID == fakeThread })
	if out := w.ok("inject", "--interrupt", id, "the short way"); !strings.Contains(out, "interrupting turn 1") {
		t.Fatalf("inject --interrupt: %q", out)
	}
	w.ok("wait", "--timeout", "120s", id)
	s := w.show(id)
	if s.Status() != record.StatusCompleted || len(s.Turns) != 2 || s.Turns[0].Status() != record.StatusInterrupted ||
		s.Turns[1].LastMessage != "went the short way" || !s.Turns[1].Resumed {
		t.Fatalf("after the interrupt: %s (%s), turns %+v", s.Status(), s.Error, s.Turns)
	}
	job := w.record(id).Job
	if job == nil || job.ID == "" {
		t.Fatalf("the settled session names no job: %+v", job)
	}
	tm := startTmux(t, w, nil, 120, 30, bins.zwarm, "attach", id)
	tm.waitFor("the CLI", "the person's CLI", time.Minute)
	// What is looked at while attached is a session whose job the
	// scheduler says has ended: that is not a dead owner.
	var last string
	sessionstest.Eventually(t, "Slurm to say job "+job.ID+" has ended", func() bool {
		last = w.jobState(job.ID)
		switch last {
		case "PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED":
			return false
		}
		return true
	})
	if s := w.show(id); s.Status() != record.StatusAttached {
		t.Fatalf("while attached, with its job %s %s, the session is %s (%s); want attached", job.ID, orGone(last), s.Status(), s.Error)
	}
	touch(t, leave)
	if screen := tm.waitFor("attach to exit", "zwarm-exit=", time.Minute); !strings.Contains(screen, "zwarm-exit=0") {
		t.Fatalf("leaving the CLI: want zwarm-exit=0 on the screen, which shows:\n%s", screen)
	}
	if s := w.show(id); s.Status() != record.StatusCompleted || len(s.Attached) != 1 || s.Attached[0].Note != "" {
		t.Fatalf("after the attach: %s, spans %+v", s.Status(), s.Attached)
	}
}

// waitCalls counts the squeue calls logged in calls that were not a
// supervisor asking for its own job's time left (-o %L).
func waitCalls(calls string) int {
	data, _ := os.ReadFile(calls)
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "call") && !strings.Contains(l, "%L") {
			n++
		}
	}
	return n
}

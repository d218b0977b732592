package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/runner/slurm/slurmtest"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// Workers spawned together (spawn -n) are one job array, submitted with
// one sbatch: each is a task of it, with its own worktree, its output in
// its own session's directory, and a life of its own: one killed leaves
// the others running, one requeued continues its thread, and a follow-up
// runs as a job of its own. A batch sbatch refuses leaves nothing.
func TestSlurmSpawnManyIsOneJobArray(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	w.initRepo(map[string]string{"README": "hello\n"})
	calls := filepath.Join(t.TempDir(), "calls")
	w.wrapOnPath("sbatch", "echo call >> '"+calls+"'\nexec '%s' \"$@\"")
	sbatches := func() int { b, _ := os.ReadFile(calls); return strings.Count(string(b), "call") }
	gate := filepath.Join(t.TempDir(), "gate")
	w.holdScript(gate, append([]fakeagent.Step{fakeagent.Run(`printf '%s\n' "$PWD" > where.txt`)}, fakeagent.Completes("done", 5)...)...)

	ids := lines(w.ok("spawn", "-n", "3", "--", "write where you are"))
	if len(ids) != 3 || sbatches() != 1 {
		t.Fatalf("spawn -n 3 printed %q with %d sbatch calls; want 3 ids and one call", ids, sbatches())
	}
	var array, batch string
	tasks := map[string]bool{}
	for i, id := range ids {
		job := w.record(id).Job
		a, task, _ := strings.Cut(job.ID, "_")
		if i == 0 {
			array, batch = a, job.Batch
		}
		if a != array || job.Batch == "" || job.Batch != batch || job.Cluster == "" {
			t.Fatalf("worker %d's job: %+v; want a task of one array, in one batch", i, job)
		}
		tasks[task] = true
	}
	if !tasks["0"] || !tasks["1"] || !tasks["2"] {
		t.Fatalf("the workers are tasks %v of array %s; want 0, 1 and 2", tasks, array)
	}
	for _, id := range ids {
		sessionstest.Eventually(t, "each task to run its agent", func() bool { return w.record(id).ThreadID == "t1" })
	}
	if r := w.zwarm("kill", ids[1]); r.code != 0 {
		t.Fatalf("kill one task: %+v", r)
	}
	if s := w.show(ids[1]); s.Status() != record.StatusKilled {
		t.Fatalf("the killed task's session is %s %q", s.Status(), s.Error)
	}
	for _, i := range []int{0, 2} {
		if st := w.jobState(w.record(ids[i]).Job.ID); st != "RUNNING" {
			t.Fatalf("with task 1 killed, task %d is %q", i, st)
		}
	}
	// A task the scheduler requeues continues its thread when it runs
	// again, as a job of its own does.
	requeued := w.record(ids[2]).Job.ID
	w.slurm("scontrol", "requeue", requeued)
	sessionstest.Eventually(t, "task 2 requeued", func() bool { return w.jobState(requeued) == "PENDING" })
	writeFile(t, gate, "")
	slurmtest.StartSoon(t, slurmtest.Cluster(t), requeued)
	if r := w.zwarm("wait", "--timeout", "2m", ids[0], ids[2]); r.code != 0 {
		w.logSessionLogs(ids...)
		t.Fatalf("wait for the other tasks: %+v", r)
	}
	continued(t, w, ids[2], requeued)
	seen := map[string]bool{}
	for _, i := range []int{0, 2} {
		s := w.show(ids[i])
		rec := w.record(ids[i])
		out := filepath.Join(w.State, "sessions", ids[i], "slurm-"+rec.Job.ID+".out")
		if _, err := os.Stat(out); s.Status() != record.StatusCompleted || err != nil {
			t.Fatalf("task %d: %s %q; its output file: %v", i, s.Status(), s.Error, err)
		}
		where, err := os.ReadFile(filepath.Join(s.Worktree, "where.txt"))
		if err != nil || strings.TrimSpace(string(where)) != s.Worktree || seen[s.Worktree] {
			t.Fatalf("task %d worked in %q (%v); its worktree is %s", i, where, err, s.Worktree)
		}
		seen[s.Worktree] = true
	}

	w.ok("inject", "--wait", ids[0], "and again")
	if job := w.record(ids[0]).Job; strings.Contains(job.ID, "_") || job.Batch != "" || sbatches() != 2 {
		t.Fatalf("the follow-up's job: %+v after %d sbatch calls; want a job of its own", job, sbatches())
	}

	r := w.zwarm("spawn", "-n", "2", "--slurm", "partition=nowhere", "--", "refused")
	if r.code != 1 || !strings.Contains(r.stderr, "nowhere") || sbatches() != 3 || len(w.IDs()) != 3 {
		t.Fatalf("spawn -n 2 on a partition that is not there: %+v; %d sbatch calls, %d sessions", r, sbatches(), len(w.IDs()))
	}
	if r := w.zwarm("spawn", "-n", "0", "--", "none"); r.code != 2 {
		t.Fatalf("spawn -n 0: %+v", r)
	}
}

// An orchestrator's delegate calls of one reply start their workers
// together: one job array, one sbatch.
func TestSlurmADelegatedReplyIsOneJobArray(t *testing.T) {
	t.Parallel()
	w, srv := slurmOrchWorld(t)
	calls := filepath.Join(t.TempDir(), "calls")
	w.wrapOnPath("sbatch", "echo call >> '"+calls+"'\nexec '%s' \"$@\"")
	task := "SLURM BATCH: three at once"
	w.setScript(fakeagent.Completes("worker finished", 500))
	srv.On(task, replyCalls(fcall("delegate", map[string]any{"task": "part one"}), fcall("delegate", map[string]any{"task": "part two"}),
		fcall("delegate", map[string]any{"task": " "}), fcall("delegate", map[string]any{"task": "part three"})),
		replyCalls(fcall("wait", map[string]any{"mode": "all"})),
		replyCalls(fcall("finish", map[string]any{"summary": "all three done"})))
	if r := w.zwarm("orchestrate", "--max-steps", "7", task); r.code != 0 {
		t.Fatalf("orchestrate: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	b, _ := os.ReadFile(calls)
	ids := w.IDs()
	if n := strings.Count(string(b), "call"); n != 1 || len(ids) != 3 {
		t.Fatalf("%d workers with %d sbatch calls; want 3 workers, one call", len(ids), n)
	}
	if r := w.zwarm(append([]string{"wait", "--timeout", "2m"}, ids...)...); r.code != 0 {
		t.Fatalf("wait for the run's workers: %+v", r)
	}
	batch := w.record(ids[0]).Job.Batch
	for _, id := range ids {
		rec := w.record(id)
		if rec.Status() != record.StatusCompleted || rec.Job.Batch == "" || rec.Job.Batch != batch || !strings.Contains(rec.Job.ID, "_") {
			t.Fatalf("worker %s: %s %q, job %+v", record.ShortID(id), rec.Status(), rec.Error, rec.Job)
		}
	}
}

// Killing one worker of spawn -n 3 while the array waits in the queue
// leaves the other two queued, and they run once the cluster takes jobs:
// a task still pending shares one record with its siblings, which a
// signal or a filtered cancel takes whole.
func TestSlurmKillOfOneQueuedWorkerOfAnArray(t *testing.T) {
	w := slurmWorld(t, "")
	env := slurmtest.Cluster(t)
	w.setScript(fakeagent.Completes("done", 5))
	slurmtest.Drain(t, env)
	ids := lines(w.ok("spawn", "-n", "3", "--", "wait your turn"))
	if len(ids) != 3 {
		t.Fatalf("spawn -n 3 printed %q", ids)
	}
	jobs := make([]string, 3)
	for i, id := range ids {
		jobs[i] = w.jobOf(id)
	}
	if r := w.zwarm("kill", ids[0]); r.code != 0 {
		t.Fatalf("kill of one queued task: %+v", r)
	}
	for i := 1; i < 3; i++ {
		if st := w.jobState(jobs[i]); st != "PENDING" {
			t.Fatalf("task %s after its sibling's kill is %q, want PENDING", jobs[i], st)
		}
		if s := w.show(ids[i]); s.Status() != record.StatusPending {
			t.Fatalf("worker %d after its sibling's kill is %s %q", i, s.Status(), s.Error)
		}
	}
	slurmtest.Resume(t, env)
	if r := w.zwarm("wait", "--timeout", "60s", ids[1], ids[2]); r.code != 0 {
		t.Fatalf("the two left, once the cluster takes jobs: %+v", r)
	}
	if s := w.show(ids[0]); s.Status() != record.StatusKilled {
		t.Fatalf("the killed worker is %s", s.Status())
	}
}

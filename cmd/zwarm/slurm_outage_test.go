package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/runner/slurm/slurmtest"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
	"golang.org/x/sys/unix"
)

// hungController is a copy of the world's cluster config whose controller
// accepts connections and never answers, as a controller that hangs (or a
// host that has gone quiet) does: every Slurm client waits on it for its
// whole message timeout.
func (w *world) hungController() string {
	w.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		w.t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never answered
		}
	}()
	w.t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	conf := ""
	for _, e := range w.extraEnv {
		if v, ok := strings.CutPrefix(e, "SLURM_CONF="); ok {
			conf = v
		}
	}
	b, err := os.ReadFile(conf)
	if err != nil {
		w.t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	hung := regexp.MustCompile(`(?m)^SlurmctldPort=.*$`).ReplaceAll(b, []byte(fmt.Sprintf("SlurmctldPort=%d", port)))
	path := filepath.Join(w.t.TempDir(), "slurm.conf")
	writeFile(w.t, path, string(hung))
	return path
}

// With the controller hung, a reader asks it once, bounded, for all the
// sessions it shows, and shows them as they were recorded: running, the
// scheduler unreachable; it neither waits on each session's job in turn
// nor concludes anything of a job it cannot see.
func TestSlurmReadersDoNotWaitOnAHungController(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	gate := filepath.Join(t.TempDir(), "gate")
	w.holdScript(gate)
	var ids []string
	for i := range 4 {
		id, _ := w.runningJob(fmt.Sprintf("held %d", i))
		ids = append(ids, id)
	}
	w.ok("ls") // the scheduler answers: what it says is kept for later readers
	real := append([]string{}, w.extraEnv...)
	calls := filepath.Join(t.TempDir(), "calls")
	w.wrapOnPath("squeue", "echo \"call $*\" >> '"+calls+"'\nexec '%s' \"$@\"")
	w.extraEnv = append(w.extraEnv, "SLURM_CONF="+w.hungController())
	for _, args := range [][]string{{"ls"}, {"show", ids[0]}, {"ls", "--json"}} {
		os.Remove(calls)
		r := w.zwarm(args...)
		if r.code != 0 {
			t.Fatalf("%v with the controller hung: %+v", args, r)
		}
		if n := waitCalls(calls); n != 1 {
			t.Errorf("%v with the controller hung asked squeue %d times; want once, for every session", args, n)
		}
		if strings.Contains(r.stdout, "failed") || strings.Contains(r.stdout, "gone") {
			t.Errorf("%v judged a job it could not see:\n%s", args, r.stdout)
		}
		if len(args) == 2 && !regexp.MustCompile(`slurm unreachable for \d+s; slurm \d+ on \S+ as of \d+s ago`).MatchString(r.stdout) {
			t.Errorf("%v does not say the scheduler is unreachable, and what it last said of the job:\n%s", args, r.stdout)
		}
	}
	w.extraEnv = real
	writeFile(t, gate, "")
	for _, id := range ids {
		if r := w.zwarm("wait", "--timeout", "2m", id); r.code != 0 {
			t.Fatalf("wait %s once the controller answers: %+v", id, r)
		}
		if s := w.show(id); s.Status() != record.StatusCompleted {
			t.Fatalf("session %s: %s %q", id, s.Status(), s.Error)
		}
	}
}

// A session's job is its cluster's: with another cluster's config (a lab
// with two, the same job ids in both), ls shows the session as its
// record says and judges nothing, and kill refuses, naming both
// clusters, rather than cancel whatever job has that id here; the job
// runs on, and completes.
func TestSlurmAnotherClustersSessionIsLeftAlone(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	other := slurmtest.Second(t)
	slurmtest.Undrained(t, other) // its node not lost meanwhile
	gate := filepath.Join(t.TempDir(), "gate")
	w.holdScript(gate)
	id, job := w.runningJob("held on the first cluster")
	if c := w.record(id).Job.Cluster; c != "zwarm" {
		t.Fatalf("the job's cluster is recorded as %q, want zwarm", c)
	}
	home := append([]string{}, w.extraEnv...)
	w.extraEnv = append(w.extraEnv, other...)
	var list []struct {
		ID          string `json:"id"`
		Status      string `json:"status"`
		RunnerState string `json:"runner_state"`
	}
	mustJSON(t, w.ok("ls", "--json"), &list)
	if len(list) != 1 || list[0].Status != "running" || !strings.Contains(list[0].RunnerState, "on cluster zwarm (this machine reaches zwarmb") {
		t.Fatalf("ls with the other cluster's config: %+v", list)
	}
	r := w.zwarm("kill", id)
	if r.code != 2 || !strings.Contains(r.stderr, "cluster zwarm") || !strings.Contains(r.stderr, "cluster zwarmb") {
		t.Fatalf("kill with the other cluster's config: %+v", r)
	}
	w.extraEnv = home
	if st := w.jobState(job); st != "RUNNING" {
		t.Fatalf("the session's job is %s after ls and kill with the other cluster's config", orGone(st))
	}
	if s := w.show(id); s.Status() != record.StatusRunning || s.Stop != nil {
		t.Fatalf("the session after ls and kill with the other cluster's config: %s, stop %+v", s.Status(), s.Stop)
	}
	writeFile(t, gate, "")
	if r := w.zwarm("wait", "--timeout", "2m", id); r.code != 0 {
		t.Fatalf("wait on its own cluster: %+v", r)
	}
}

// An sbatch that queues the job but answers too late loses nothing: the
// spawn, cut off at submit_timeout, finds the job the scheduler queued by
// its name, and follows it; the worker completes.
func TestSlurmSlowSubmissionKeepsItsJob(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "submit_timeout = \"2s\"\n")
	w.wrapOnPath("sbatch", "out=$('%s' \"$@\") || exit $?\nsleep 8\necho \"$out\"")
	r := w.zwarm("spawn", "--", "say hello")
	if r.code != 0 || !strings.Contains(r.stderr, "did not answer within 2s") || !strings.Contains(r.stderr, "queued job") {
		t.Fatalf("spawn with an sbatch that answers after 8 s: %+v", r)
	}
	id := strings.TrimSpace(r.stdout)
	if job := w.record(id).Job; job == nil || job.ID == "" {
		t.Fatalf("the session's job: %+v", job)
	}
	if r := w.zwarm("wait", "--timeout", "2m", id); r.code != 0 {
		t.Fatalf("wait: %+v", r)
	}
	if s := w.show(id); s.Status() != record.StatusCompleted || len(w.IDs()) != 1 {
		t.Fatalf("after the slow submission: %s %q, %d sessions", s.Status(), s.Error, len(w.IDs()))
	}
}

// sbatch's own variables in the submitter's environment do not undo what
// zwarm asks of a job: with SBATCH_EXPORT=NONE the job still gets the
// environment its agent needs, and with SBATCH_WAIT the spawn still
// returns while the job runs (the worker waits on a gate the test opens
// only after that).
func TestSlurmSbatchVariablesDoNotWin(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	gate := filepath.Join(t.TempDir(), "gate")
	w.holdScript(gate, fakeagent.Completes("done", 5)...)
	w.extraEnv = append(w.extraEnv, "SBATCH_EXPORT=NONE", "SBATCH_WAIT=1", "SBATCH_ERROR=/dev/null")
	id := w.spawn("held")
	writeFile(t, gate, "")
	if r := w.zwarm("wait", "--timeout", "2m", id); r.code != 0 {
		t.Fatalf("wait: %+v", r)
	}
	if s := w.show(id); s.Status() != record.StatusCompleted || s.LastMessage != "done" {
		t.Fatalf("with SBATCH_EXPORT=NONE, SBATCH_WAIT and SBATCH_ERROR set: %s %q", s.Status(), s.Error)
	}
}

// A node lost under a running worker costs its turn, not the session: the
// job goes back to the queue (sbatch --requeue) and, once it runs again,
// its supervisor takes the session over and continues the agent's thread.
// Meanwhile the session is judged by its job, queued again, never failed.
// The second cluster's node is lost: its slurmd and every job on it
// killed at once, as when a machine dies.
func TestSlurmALostNodesWorkerContinues(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	second := slurmtest.Second(t)
	w.extraEnv = append(w.extraEnv, second...)
	gate := filepath.Join(t.TempDir(), "gate")
	w.holdScript(gate, fakeagent.Completes("done", 5)...)
	id, job := w.runningJob("held on a node about to be lost")
	back := slurmtest.LoseNode(t, second)
	sessionstest.Eventually(t, "the job requeued", func() bool { return w.jobState(job) == "PENDING" })
	if s := w.show(id); s.Status() != record.StatusRunning {
		t.Fatalf("with its job requeued, the session is %s %q", s.Status(), s.Error)
	}
	writeFile(t, gate, "")
	back()
	slurmtest.StartSoon(t, second, job)
	continued(t, w, id, job)
}

// A job the scheduler requeues (as a preemption does; here scontrol
// requeue) is not a cancel: its supervisor stops the agent and records
// nothing, the session waits with its job in the queue, and the job's next
// run continues the thread. A cancel is still a kill (the runner sees the
// job CANCELLED: TestSlurmCancelledFromOutside). Slurm signals every
// process of the job at once, so the agent may end before its supervisor
// sees the signal: the second subtest makes that order certain.
func TestSlurmARequeuedWorkerContinues(t *testing.T) {
	t.Parallel()
	for _, agentFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "signalled together", true: "its agent ended first"}[agentFirst], func(t *testing.T) {
			t.Parallel()
			requeued(t, agentFirst)
		})
	}
}

func requeued(t *testing.T, agentFirst bool) {
	w := slurmWorld(t, "[watchers.stall]\nenabled = true\nafter = \"1s\"\nfirst_event = \"1s\"\n")
	dir := t.TempDir()
	gate, die, died := filepath.Join(dir, "gate"), filepath.Join(dir, "die"), filepath.Join(dir, "died")
	steps := fakeagent.Completes("done", 5)
	if agentFirst {
		// The agent dies of a SIGTERM (once: not in the job's next run)
		// a moment before its supervisor gets the scheduler's.
		steps = append([]fakeagent.Step{fakeagent.WaitFile(die),
			fakeagent.Run(fmt.Sprintf("[ -e '%[1]s' ] || { touch '%[1]s'; kill -TERM $PPID; sleep 5; }", died))}, steps...)
	}
	w.holdScript(gate, steps...)
	id, job := w.runningJob("held until requeued")
	if agentFirst {
		writeFile(t, gate, "")
		writeFile(t, die, "")
		sessionstest.Eventually(t, "the agent to end", func() bool { _, err := os.Stat(died); return err == nil })
		time.Sleep(200 * time.Millisecond)
	}
	w.slurm("scontrol", "requeue", job)
	sessionstest.Eventually(t, "the job requeued", func() bool { return w.jobState(job) == "PENDING" })
	var list []struct {
		Status      string `json:"status"`
		RunnerState string `json:"runner_state"`
	}
	mustJSON(t, w.ok("ls", "--json"), &list)
	if len(list) != 1 || list[0].Status != "running" || !strings.HasPrefix(list[0].RunnerState, "queued · slurm "+job) {
		t.Fatalf("with its job requeued: %+v", list)
	}
	time.Sleep(2 * time.Second) // past the stall thresholds, in the queue
	if out, _ := w.onTerminal(160, nil, "", "ls"); strings.Contains(out, "stalled") || !strings.Contains(out, "queued · slurm "+job) {
		t.Fatalf("ls on a terminal, the job requeued past the stall thresholds:\n%s", out)
	}
	writeFile(t, gate, "")
	slurmtest.StartSoon(t, slurmtest.Cluster(t), job)
	continued(t, w, id, job)
}

// continued waits for session id, whose job was requeued while its first
// turn ran, to complete in that job's next run: the first turn
// interrupted, the second continuing the thread.
func continued(t *testing.T, w *world, id, job string) {
	t.Helper()
	if r := w.zwarm("wait", "--timeout", "3m", id); r.code != 0 {
		t.Fatalf("wait for the job's next run: %+v", r)
	}
	rec := w.record(id)
	if rec.Status() != record.StatusCompleted || len(rec.Turns) != 2 || rec.Job.ID != job {
		t.Fatalf("after the requeue: %s %q, %d turns, job %s (was %s)", rec.Status(), rec.Error, len(rec.Turns), rec.Job.ID, job)
	}
	first, second := rec.Turns[0], rec.Turns[1]
	if first.Status() != record.StatusInterrupted || !strings.Contains(strings.Join(first.Notes, " "), "requeued") ||
		!second.Resumed || !strings.Contains(second.Prompt, "requeued") || second.Job != job {
		t.Fatalf("the turns: %+v / %+v", first, second)
	}
}

// [runner.slurm] setup runs in each job before the supervisor, in its
// shell: what it exports reaches the agent, and what it prints is in zwarm
// logs. A setup that fails fails the session with its exit code and the
// end of what it printed; the agent does not run.
func TestSlurmJobSetup(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "setup = \"\"\"\necho loading the toolchain\nexport ZWARM_TEST_TOOLCHAIN=loaded\n\"\"\"\n")
	w.setScript(append([]fakeagent.Step{fakeagent.Run(`printf '%s' "$ZWARM_TEST_TOOLCHAIN" > toolchain.txt`)}, fakeagent.Completes("done", 5)...))
	id := w.spawn("use the toolchain")
	if r := w.zwarm("wait", "--timeout", "2m", id); r.code != 0 {
		t.Fatalf("wait: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Work, "toolchain.txt")); string(b) != "loaded" {
		t.Fatalf("the agent saw ZWARM_TEST_TOOLCHAIN=%q, want what the setup exported", b)
	}
	if out := w.ok("logs", id); !strings.Contains(out, "[runner.slurm] setup") || !strings.Contains(out, "loading the toolchain") {
		t.Fatalf("logs lacks the job's setup:\n%s", out)
	}

	bad := slurmWorld(t, "setup = \"echo module python/3.12 not found >&2; false\"\n")
	id = bad.spawn("never runs")
	if r := bad.zwarm("wait", "--timeout", "2m", id); r.code != 1 {
		t.Fatalf("wait on a job whose setup failed: %+v", r)
	}
	s := bad.show(id)
	if s.Status() != record.StatusFailed || !strings.Contains(s.Error, "setup ([runner.slurm] setup) failed with exit code 1") ||
		!strings.Contains(s.Error, "module python/3.12 not found") || len(bad.Invocations()) != 0 {
		t.Fatalf("a failed setup: %s %q, the agent ran %d times", s.Status(), s.Error, len(bad.Invocations()))
	}
}

// What a worker's jobs ask of the cluster comes from [runner.slurm], its
// role's [roles.NAME.slurm] over that, and the spawn's flags over both;
// a follow-up's job asks the same. What sbatch could not take is refused
// before anything is submitted, and a request sbatch refuses (a GPU the
// cluster has none of) leaves nothing.
func TestSlurmResourcesPerWorker(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "time = \"30\"\ncpus = 1\n[roles.trainer]\nrunner = \"slurm\"\n[roles.trainer.slurm]\ncpus = 2\ntime = \"45\"\n")
	asked := func(job string) string {
		t.Helper()
		return strings.TrimSpace(w.slurm("squeue", "-h", "--states=all", "-j", job, "-O", "TimeLimit:0|,NumCPUs:0|,MinMemory:0|"))
	}
	id := w.spawn("train", "--role", "trainer", "--slurm-time", "2h", "--slurm", "mem=100M")
	if got := asked(w.jobOf(id)); got != "2:00:00|2|100M|" {
		t.Fatalf("the job asked %q, want the spawn's time and memory and the role's CPUs", got)
	}
	if out := w.ok("show", id); !strings.Contains(out, "asks     time=2h cpus=2 mem=100M") {
		t.Fatalf("show does not say what the jobs ask:\n%s", out)
	}
	var doc struct {
		JobResources map[string]string `json:"job_resources"`
	}
	if mustJSON(t, w.ok("show", "--json", id), &doc); doc.JobResources["time"] != "2h" || doc.JobResources["cpus"] != "2" || doc.JobResources["mem"] != "100M" {
		t.Fatalf("show --json job_resources %v", doc.JobResources)
	}
	w.ok("wait", "--timeout", "2m", id)
	w.ok("inject", "--wait", id, "and again")
	if rec := w.record(id); asked(rec.Job.ID) != "2:00:00|2|100M|" {
		t.Fatalf("the follow-up's job %s asked %q", rec.Job.ID, asked(rec.Job.ID))
	}
	for _, bad := range [][]string{{"--slurm-time", "soon"}, {"--gres", "gpu:-1"}, {"--slurm", "cpus=0"}, {"--slurm", "mem=lots"}, {"--slurm", "disk=1G"},
		{"--runner", "local", "--gres", "gpu:1"}} {
		r := w.zwarm(append(append([]string{"spawn"}, bad...), "--", "refused")...)
		if r.code != 2 || r.stderr == "" {
			t.Errorf("spawn %v: %+v; want it refused as a usage error", bad, r)
		}
	}
	r := w.zwarm("spawn", "--gres", "gpu:1", "--", "no gpu here")
	if r.code != 1 || !strings.Contains(r.stderr, "gres") {
		t.Fatalf("spawn asking a GPU of a cluster with none: %+v", r)
	}
	if ids := w.IDs(); len(ids) != 1 {
		t.Fatalf("refused spawns left sessions: %v", ids)
	}
}

// On a cluster that keeps accounts (the second test cluster has slurmdbd),
// show asks sacct once what each ended job took (its node, elapsed time,
// CPUs, largest resident set, state), keeps it in the record, which the
// scheduler's queue does not, and counts its core-hours in the worker's
// cost at [prices.slurm] core_hour.
func TestSlurmAccounting(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "[prices.slurm]\ncore_hour = 3.6\n")
	second := slurmtest.Second(t)
	slurmtest.Undrained(t, second)
	w.extraEnv = append(w.extraEnv, second...)
	w.setScript(append([]fakeagent.Step{fakeagent.Run(`python3 -c "x = bytearray(80 << 20); import time; time.sleep(6)"`)}, fakeagent.Completes("done", 5)...))
	id := w.spawn("take some memory")
	if r := w.zwarm("wait", "--timeout", "2m", id); r.code != 0 {
		t.Fatalf("wait: %+v", r)
	}
	before := w.record(id)
	// The controller tells the database of the job's end in its own
	// time; until then show has no account to keep, and asks again.
	var out string
	var rec record.Session
	sessionstest.Eventually(t, "show to keep the job's accounting", func() bool {
		out, rec = w.ok("show", id), w.record(id)
		return len(rec.Accounting) > 0
	})
	if len(rec.Accounting) != 1 {
		t.Fatalf("after show, the record keeps %+v of its job's accounting; show said:\n%s", rec.Accounting, out)
	}
	a := rec.Accounting[0]
	if a.ID != rec.Job.ID || a.Node == "" || a.Elapsed < 6 || a.CPUs < 1 || a.MaxRSS < 80<<20 || a.State != "COMPLETED" || a.ExitCode != "0:0" {
		t.Fatalf("the job's accounting: %+v", a)
	}
	if want := "jobs     job " + a.ID + " (turn 1) on " + a.Node + " · "; !strings.Contains(out, want) || !strings.Contains(out, "max RSS ") {
		t.Fatalf("show lacks %q:\n%s", want, out)
	}
	if before.CostUSD == nil || rec.CostUSD == nil {
		t.Fatalf("cost before %v, after %v", before.CostUSD, rec.CostUSD)
	}
	if got, want := *rec.CostUSD-*before.CostUSD, a.CoreHours()*3.6; got < want-0.0001 || got > want+0.0001 {
		t.Fatalf("the core-hours added %.4f to the cost, want %.4f (%d CPUs, %d s at 3.6 a core-hour)", got, want, a.CPUs, a.Elapsed)
	}
	var doc struct {
		Accounting   []record.JobAccount `json:"accounting"`
		JobResources map[string]string   `json:"job_resources"`
	}
	mustJSON(t, w.ok("show", "--json", id), &doc)
	if len(doc.Accounting) != 1 || doc.Accounting[0] != a {
		t.Fatalf("show --json accounting %+v, want %+v", doc.Accounting, a)
	}
	// Asked once: the next show reads the record.
	calls := filepath.Join(t.TempDir(), "calls")
	w.wrapOnPath("sacct", "echo call >> '"+calls+"'\nexec '%s' \"$@\"")
	w.ok("show", id)
	if b, _ := os.ReadFile(calls); len(b) != 0 {
		t.Fatalf("show asked sacct again for a job the record has: %q", b)
	}
}

// A node that cannot see the state dir (here: the state dir on a tmpfs
// mounted after the cluster's slurmd started, in its own mount namespace,
// so the node sees the empty directory under it) fails the job before its
// supervisor runs; the session says so, not a bare "JobLaunchFailure".
func TestSlurmANodeThatCannotSeeTheStateDir(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("mounting a tmpfs needs root (CI runs as root)")
	}
	w := slurmWorld(t, "")
	mnt := t.TempDir()
	if err := unix.Mount("zwarm-test", mnt, "tmpfs", 0, "size=64m"); err != nil {
		t.Fatalf("mount a tmpfs on %s: %v", mnt, err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	w.MoveState(filepath.Join(mnt, "state"))
	id := w.spawn("never starts")
	if r := w.zwarm("wait", "--timeout", "2m", id); r.code != 1 {
		t.Fatalf("wait: %+v", r)
	}
	s := w.show(id)
	if s.Status() != record.StatusFailed || !strings.Contains(s.Error, "could not open the job's output file") ||
		!strings.Contains(s.Error, "cannot reach the state dir") {
		t.Fatalf("a node that cannot see the state dir: %s %q", s.Status(), s.Error)
	}
}

// A supervisor killed outright inside its job (an OOM kill, a kill -9)
// leaves nothing of its worker running after the job: its agent and a
// daemon the agent started (setsid) are killed and reaped by the job's
// main process, whatever the cluster's process tracking.
func TestSlurmASupervisorKilledOutrightLeavesNothing(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	mark := fmt.Sprintf("7777.%d", time.Now().UnixNano()%1_000_000)
	w.setScript([]fakeagent.Step{fakeagent.Out(`{"type":"thread.started","thread_id":"t1"}`),
		{"spawn": "sleep " + mark, "setsid": true}, {"wait_file": filepath.Join(t.TempDir(), "never")}})
	id, job := w.runningJob("hold, with a daemon")
	inner := 0
	sessionstest.Eventually(t, "the job's supervisor", func() bool {
		inner = processWith(func(args []string) bool {
			return slices.Contains(args, "__supervise") && !slices.Contains(args, "--job") && args[len(args)-1] == id
		})
		return inner != 0 && processWith(func(args []string) bool { return len(args) == 2 && args[0] == "sleep" && args[1] == mark }) != 0
	})
	syscall.Kill(inner, syscall.SIGKILL)
	sessionstest.Eventually(t, "the job to end", func() bool { st := w.jobState(job); return st != "RUNNING" && st != "PENDING" })
	sessionstest.Eventually(t, "the worker's processes to go", func() bool {
		return processWith(func(args []string) bool {
			return len(args) == 2 && args[0] == "sleep" && args[1] == mark || slices.Contains(args, "__supervise") && args[len(args)-1] == id
		}) == 0
	})
	// The job's end is the runner's word: a reader records it.
	var s *session
	sessionstest.Eventually(t, "the session to settle", func() bool { s = w.show(id); return s.Settled() })
	t.Logf("settled %s: %s", s.Status(), s.Error)
}

// processWith is the pid of a process whose command line match says
// yes of, or 0.
func processWith(match func(args []string) bool) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue
		}
		if args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"); match(args) {
			return pid
		}
	}
	return 0
}

// A job requeued while its worker's worktree is still being made (a setup
// that runs for minutes, as npm ci does, on a preemptible partition) is
// not a kill: the session waits, pending, with its job in the queue, and
// the job's next run makes the worktree again and does the task.
func TestSlurmAJobRequeuedWhileItsWorktreeIsMadeGoesOn(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "gate")
	w := slurmWorld(t, "[worktrees]\nsetup = \"echo making; while [ ! -e '"+gate+"' ]; do sleep 0.1; done\"\n")
	w.initRepo(map[string]string{"a": "a\n"})
	w.setScript(fakeagent.Completes("done", 5))
	id := w.spawn("made twice")
	job := w.jobOf(id)
	w.awaitSetupLog(id, "making")
	w.slurm("scontrol", "requeue", job)
	sessionstest.Eventually(t, "the job requeued", func() bool { return w.jobState(job) == "PENDING" })
	if s := w.show(id); s.Status() != record.StatusPending || s.Error != "" {
		w.logSessionLogs(id)
		t.Fatalf("with its job requeued while its worktree was made, the session is %s %q", s.Status(), s.Error)
	}
	writeFile(t, gate, "")
	slurmtest.StartSoon(t, slurmtest.Cluster(t), job)
	if r := w.zwarm("wait", "--timeout", "3m", id); r.code != 0 {
		w.logSessionLogs(id)
		t.Fatalf("wait for the job's next run: %+v", r)
	}
	if s := w.record(id); s.Status() != record.StatusCompleted || s.Workspace == nil || s.Workspace.State != record.WorkspaceReady || s.Job.ID != job {
		t.Fatalf("after the requeue: %s %q, workspace %+v", s.Status(), s.Error, s.Workspace)
	}

	// Cancelled at that moment, it is killed, and says by whom.
	os.Remove(gate)
	id = w.spawn("cancelled while made")
	job = w.jobOf(id)
	w.awaitSetupLog(id, "making")
	w.slurm("scancel", job)
	if r := w.zwarm("wait", "--timeout", "2m", id); r.code != 1 {
		t.Fatalf("wait on a job cancelled while its worktree was made: %+v", r)
	}
	if s := w.show(id); s.Status() != record.StatusKilled || !strings.Contains(s.Error, "cancelled by slurm (job "+job+")") {
		w.logSessionLogs(id)
		t.Fatalf("cancelled while its worktree was made: %s %q", s.Status(), s.Error)
	}
}

// The requeue's SIGTERM reaches the setup command and the supervisor
// alike, and the setup's end may be seen first: the supervisor waits for
// its own signal, as it does when the agent dies of one, before it takes
// a setup ended by SIGTERM for a failed one. Here the setup ends itself
// with SIGTERM, and the job is requeued once the supervisor has logged
// that end, so that it always comes first; the session was failed
// ("setup ... failed with exit code 143"), as it was now and then when
// the two came together.
func TestSlurmASetupEndedBySIGTERMJustBeforeARequeueIsNoFailure(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "gate")
	w := slurmWorld(t, "[worktrees]\nsetup = \"echo making; while [ ! -e '"+gate+"' ]; do sleep 0.1; done; rm -f '"+gate+"'; kill -TERM $$\"\n")
	w.initRepo(map[string]string{"a": "a\n"})
	w.setScript(fakeagent.Completes("done", 5))
	id := w.spawn("made while requeued")
	job := w.jobOf(id)
	w.awaitSetupLog(id, "making")
	writeFile(t, gate, "")
	w.awaitSetupLog(id, "exit code 143")
	w.slurm("scontrol", "requeue", job)
	sessionstest.Eventually(t, "the job requeued", func() bool { return w.jobState(job) == "PENDING" })
	if s := w.show(id); s.Status() != record.StatusPending || s.Error != "" {
		w.logSessionLogs(id)
		t.Fatalf("with its setup ended by SIGTERM just before its job was requeued, the session is %s %q", s.Status(), s.Error)
	}
	w.slurm("scancel", job)
	if r := w.zwarm("wait", "--timeout", "2m", id); r.code != 1 {
		t.Fatalf("wait on the job cancelled after: %+v", r)
	}
}

// A follow-up sent with --interrupt while the job waits in the queue
// after a requeue takes the thread first when the job runs again, as it
// would have from the running turn: not queued behind a turn that only
// says the job was requeued.
func TestSlurmAnInterruptWhileRequeuedGoesFirst(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "")
	gate := filepath.Join(t.TempDir(), "gate")
	w.holdScript(gate, fakeagent.Completes("done", 5)...)
	id, job := w.runningJob("held until requeued")
	w.slurm("scontrol", "hold", job) // it stays in the queue once requeued
	w.slurm("scontrol", "requeue", job)
	sessionstest.Eventually(t, "the job requeued", func() bool { return w.jobState(job) == "PENDING" })
	w.ok("inject", "--interrupt", id, "urgent: use the other port")
	writeFile(t, gate, "")
	w.slurm("scontrol", "release", job)
	slurmtest.StartSoon(t, slurmtest.Cluster(t), job)
	if r := w.zwarm("wait", "--timeout", "3m", id); r.code != 0 {
		w.logSessionLogs(id)
		t.Fatalf("wait for the job's next run: %+v", r)
	}
	rec := w.record(id)
	if len(rec.Turns) != 2 || rec.Turns[0].Status() != record.StatusInterrupted || rec.Turns[1].Prompt != "urgent: use the other port" || !rec.Turns[1].Resumed {
		t.Fatalf("after the requeue and the interrupt: %d turns %+v", len(rec.Turns), rec.Turns)
	}
}

// A job that fails before its supervisor records anything (here its zwarm
// binary is gone from the node by the time the job runs) says why from
// its output file, the only place the reason is.
func TestSlurmAJobThatFailedBeforeItsSupervisorSaysWhy(t *testing.T) {
	t.Parallel()
	w := slurmWorld(t, "extra_args = [\"--hold\"]\n") // it waits, held, while its zwarm goes
	copied := filepath.Join(t.TempDir(), "zwarm")     // the test binary is zwarm by this name
	b, err := os.ReadFile(bins.zwarm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, b, 0o700); err != nil {
		t.Fatal(err)
	}
	spawn := exec.Command(copied, "spawn", "never supervised")
	spawn.Dir, spawn.Env = w.Work, w.env()
	var stderr strings.Builder
	spawn.Stderr = &stderr
	out, err := spawn.Output()
	if err != nil {
		t.Fatalf("spawn: %v: %s", err, stderr.String())
	}
	id := strings.TrimSpace(string(out))
	job := w.jobOf(id)
	os.Remove(copied)
	w.slurm("scontrol", "release", job)
	if r := w.zwarm("wait", "--timeout", "2m", id); r.code != 1 {
		t.Fatalf("wait on a job whose zwarm is gone: %+v", r)
	}
	if s := w.show(id); s.Status() != record.StatusFailed || !strings.Contains(s.Error, "slurm-"+job+".out ends: ") || !strings.Contains(s.Error, copied) {
		w.logSessionLogs(id)
		t.Fatalf("a job whose zwarm is gone: %s %q", s.Status(), s.Error)
	}
}

package sessions_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/zwarm/zwarm/sessions/proc"
	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

// A signal to the supervisor that no kill recorded a reason for is
// recorded for what it is: someone else's SIGTERM, a cluster's scheduler
// cancelling the job, or its warning that the job's time limit is near.
// Before, each was recorded as "killed by zwarm kill", or, for SIGUSR1,
// not at all (its default action ended the supervisor). A kill's own
// reason, recorded before its SIGTERM, is kept (TestKillBecauseRecordsTheReason).
func TestASignalNobodyExplainedIsRecordedAsSuch(t *testing.T) {
	w := newWorld(t)
	w.SetScript(fakeagent.Script{Default: []map[string]any{fakeagent.Out(`{"type":"thread.started","thread_id":"t"}`), {"wait_file": filepath.Join(t.TempDir(), "never")}}})
	for _, c := range []struct {
		sig  syscall.Signal
		job  string
		want string
	}{
		{syscall.SIGTERM, "", "stopped by SIGTERM"},
		{syscall.SIGINT, "", "stopped by SIGINT"},
		{syscall.SIGTERM, "4242", "cancelled by slurm (job 4242)"},
		{syscall.SIGUSR1, "4242", "stopped ahead of the time limit of its slurm job 4242, at Slurm's warning a minute before it"},
	} {
		t.Setenv("SLURM_JOB_ID", c.job)
		s := w.spawn("hold")
		var sup *proc.Ref
		sessionstest.Eventually(t, "the agent to run", func() bool {
			g, _ := w.Manager.Get(context.Background(), s.ID)
			sup = g.Owner
			return g.ThreadID != "" && sup != nil && sup.Role == record.RoleSupervisor
		})
		if err := syscall.Kill(sup.PID, c.sig); err != nil {
			t.Fatal(err)
		}
		got := w.wait(s.ID)
		if got.Status() != record.StatusKilled || got.Error != c.want || got.Turns[0].Error != c.want {
			t.Errorf("%v (job %q): %s %q, turn %q; want killed %q", c.sig, c.job, got.Status(), got.Error, got.Turns[0].Error, c.want)
		}
		if left := w.Manager.Containment(s.ID).Procs(); len(left) > 0 {
			t.Errorf("%v: processes alive after the session settled: %v", c.sig, left)
		}
	}
}

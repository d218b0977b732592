package sessions_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/store"
)

// leaseRun are the tests of locks and their waiters that run a second
// time under the lease scheme (ZWARM_LOCKS=lease), which a state dir on a
// network file system uses: every lock of the state dir, the supervisors'
// and the lock holders' too, is then a lease file on this local disk.
var leaseRun = []string{
	// locks_test.go
	"TestKillStopsWhatASettledSessionLeft",
	"TestRemoveRefusesASettledSessionWithLiveProcesses",
	"TestReadersDoNotWaitForLocks",
	"TestWriterWaitsAtMostLockTimeout",
	"TestInjectInterruptedWhileWaitingChangesNothing",
	"TestKillInAReadOnlyStateDir",
	"TestInjectWaitsForAKillToFinish",
	// killlock_test.go
	"TestKillUnderAForeignLockStopsTheSessionAndSaysSo",
	"TestKillOfASettledSessionUnderAHeldLockForcesNothing",
	"TestKillInterruptedAroundForcingALock",
	"TestRemoveUnderAHeldLockNamesTheCommand",
	// the supervisor's whole-life lock, the spawn limit's, fencing
	"TestNewSupervisorWaitsForThePreviousOne",
	"TestSpawnLimitHoldsAcrossCallsAndProcesses",
	"TestAStaleSupervisorIsFencedOff",
	// a lock taken on a full disk, where a lease's record cannot be written
	"TestFullDisk",
	"TestFullDiskKeepsTheTurnsLastWords",
	"TestFullDiskWhileTheOutputStillFits",
}

// The lock tests hold under the lease scheme too: this test binary runs
// them again with ZWARM_LOCKS=lease.
func TestLocksUnderTheLeaseScheme(t *testing.T) {
	if s := os.Getenv(store.LocksEnv); s != "" {
		t.Skipf("this whole run is under %s=%s", store.LocksEnv, s)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^("+strings.Join(leaseRun, "|")+")$", "-test.count=1", "-test.v")
	// A fresh TestMain: not the supervisor this binary's own children are
	// told to be.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, helperEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, store.LocksEnv+"="+string(store.SchemeLease))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\nPASS\n") {
		t.Fatalf("under ZWARM_LOCKS=lease: %v\n%s", err, out)
	}
	for _, name := range leaseRun {
		// Those that need what this machine lacks (cgroups) skip here as
		// they do in this run.
		if !strings.Contains(string(out), "--- PASS: "+name+" ") && !strings.Contains(string(out), "--- SKIP: "+name+" ") {
			t.Errorf("%s did not run under leases", name)
		}
	}
	t.Logf("under ZWARM_LOCKS=lease:\n%s", out)
}

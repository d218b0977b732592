package sessions_test

import (
	"testing"

	"github.com/zwarm/zwarm/sessions/sessionstest"
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
	// A fresh TestMain: not the supervisor this binary's own children are
	// told to be. Those that need what this machine lacks (cgroups) skip
	// there as they do here.
	out := sessionstest.UnderLeases(t, leaseRun, true, helperEnv)
	t.Logf("under ZWARM_LOCKS=lease:\n%s", out)
}

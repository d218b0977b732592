package sessionstest

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/store"
)

// UnderLeases runs the named tests of this test binary again in a child
// process with every lock of the state dir a lease file (ZWARM_LOCKS=lease,
// as on a network file system), and fails t unless the run passed and each
// of them passed (or, with skipOK, skipped, as a test needing what this
// machine lacks does here too). The variables named in drop are left out
// of the child's environment. It returns the child's output. A run that is
// itself under a lock scheme skips.
func UnderLeases(t *testing.T, names []string, skipOK bool, drop ...string) string {
	t.Helper()
	if s := os.Getenv(store.LocksEnv); s != "" {
		t.Skipf("this whole run is under %s=%s", store.LocksEnv, s)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^("+strings.Join(names, "|")+")$", "-test.count=1", "-test.v")
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, store.LocksEnv+"="+string(store.SchemeLease))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\nPASS\n") {
		t.Fatalf("under ZWARM_LOCKS=lease: %v\n%s", err, out)
	}
	for _, name := range names {
		ran := strings.Contains(string(out), "--- PASS: "+name+" ") ||
			skipOK && strings.Contains(string(out), "--- SKIP: "+name+" ")
		if !ran {
			t.Errorf("%s did not run under leases", name)
		}
	}
	return string(out)
}

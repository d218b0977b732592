//go:build stress

package sessions_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/sessions/proc"
)

func containStressN(t *testing.T, def int) int {
	if v := os.Getenv("ZWARM_STRESS_N"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ZWARM_STRESS_N=%q: want a positive number", v)
		}
		return n
	}
	return def
}

// A supervisor SIGKILLed while its agent's escaper (env -i, nohup, setsid)
// hides in a cgroup below its leaf or in the session's cgroup: after the
// sweep of the reader that notices the dead supervisor, nothing survives
// and no cgroup of the session is left.
func TestStressEscaperAfterSupervisorKill(t *testing.T) {
	if how, err := proc.Containment(); !strings.HasPrefix(how, "cgroup") {
		t.Skipf("cgroup containment is not available here (%v)", err)
	}
	n := containStressN(t, 100)
	w := newWorld(t)
	dir := t.TempDir()
	wrong, survivors := 0, 0
	for i := range n {
		where := "sub"
		if i%2 == 1 {
			where = "session"
		}
		survived, err := escapeSupervisorKill(t, w, dir, where, i)
		if survived {
			survivors++
		}
		if err != nil {
			wrong++
			t.Log(err)
		}
	}
	t.Logf("escaper after supervisor SIGKILL: %d tries, %d wrong outcomes (%d escapers survived)", n, wrong, survivors)
	if wrong > 0 {
		t.Fail()
	}
}

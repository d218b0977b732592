//go:build stress

package orchestrator

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/zwarm/zwarm/orchestrator/internal/testenv"
	"github.com/zwarm/zwarm/sessions/proc"
)

// A run's process SIGKILLed while a command it ran with exec_command left
// a setsid+nohup escaper: after the sweep of a resume, zwarm runs kill or
// zwarm doctor (in turn), nothing survives.
func TestStressDeadRunsEscaper(t *testing.T) {
	if how, err := proc.Containment(); !strings.HasPrefix(how, "cgroup") {
		t.Skipf("cgroup containment is not available here (%v)", err)
	}
	n := 100
	if v := os.Getenv("ZWARM_STRESS_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("ZWARM_STRESS_N=%q: want a positive number", v)
		}
	}
	w := testenv.New(t, bins, "")
	sweeps := runSweeps(t, w)
	var hows []string
	for how := range sweeps {
		hows = append(hows, how)
	}
	sort.Strings(hows)
	wrong, survivors := 0, 0
	for i := range n {
		survived, err := escapeRunKill(t, w, i, sweeps[hows[i%len(hows)]])
		if survived {
			survivors++
		}
		if err != nil {
			wrong++
			t.Logf("%s: %v", hows[i%len(hows)], err)
		}
	}
	t.Logf("escaper after the run's process was SIGKILLed: %d tries, %d wrong outcomes (%d escapers survived)", n, wrong, survivors)
	if wrong > 0 {
		t.Fail()
	}
}

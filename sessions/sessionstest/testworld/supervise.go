package testworld

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/zwarm/zwarm/sessions/agent"
	"github.com/zwarm/zwarm/sessions/state"
	"github.com/zwarm/zwarm/sessions/supervisor"
)

// Supervisor is `zwarm __supervise [--state-dir DIR] [--detach] ID` as a
// test binary plays it (see testbin), with the test's adapters: with
// --detach it starts itself again in a session of its own, as zwarm does,
// and exits.
type Supervisor struct {
	Adapters agent.Adapters
	// Before runs before the supervisor does anything, signal handling
	// included, and After once it is done.
	Before, After func(st *state.Store, id string)
}

// Main supervises the session the command line names and returns the
// exit code.
func (sv Supervisor) Main(args []string) int {
	var stateDir, id string
	detach := false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--state-dir" && i+1 < len(args):
			i++
			stateDir = args[i]
		case a == "--detach":
			detach = true
		case !strings.HasPrefix(a, "-") && a != "__supervise":
			id = a
		}
	}
	if err := sv.run(stateDir, id, detach); err != nil {
		fmt.Fprintln(os.Stderr, "zwarm:", err)
		return 1
	}
	return 0
}

func (sv Supervisor) run(stateDir, id string, detach bool) error {
	st, err := state.NewStore(stateDir)
	if err != nil {
		return err
	}
	if detach {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		// "__supervise" in its command line, as zwarm's: a kill signals a
		// recorded supervisor only if its command line says it is one.
		return st.StartDetached(id, []string{exe, "__supervise", "--state-dir", st.Dir(), id}, os.Stdout)
	}
	if sv.Before != nil {
		sv.Before(st, id)
	}
	// The supervisor handles its signals itself, as in zwarm.
	err = supervisor.Supervise(context.Background(), supervisor.Options{Store: st, Adapters: sv.Adapters}, id)
	if sv.After != nil {
		sv.After(st, id)
	}
	return err
}

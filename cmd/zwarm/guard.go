package main

import (
	"fmt"
	"os"

	"github.com/zwarm/zwarm/sessions/proc"
)

// guardCmd runs an agent under a proc.Guard for its supervisor:
// `zwarm __guard [--died FILE] -- AGENT ARGS...`. It is no command of
// the command line: runMain hands it over before any of its own signal
// handling, which would take the stop signals meant for the agent's
// group as its own.
const guardCmd = "__guard"

// runGuard is the guard's process; its exit code is the agent's.
func runGuard(args []string) int {
	var died string
	if len(args) > 1 && args[0] == "--died" {
		died, args = args[1], args[2:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintf(os.Stderr, "zwarm: %s: give the command to guard after --\n", guardCmd)
		return 2
	}
	code, err := proc.Guard{Argv: args, Orphaned: proc.GuardOrphaned, DiedFile: died}.Run()
	if err != nil {
		fmt.Fprintf(os.Stderr, "zwarm: cannot start the agent: %v\n", err)
		return 127
	}
	return code
}

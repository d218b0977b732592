// Command fakeagent is the scripted fake agent (sessions/sessionstest/fakeagent)
// as a program of its own, for the benchmark scripts that run a built zwarm
// (cmd/zwarm/testdata/worktrees.sh); the tests serve it from their own
// binaries instead.
package main

import (
	"os"

	"github.com/zwarm/zwarm/sessions/sessionstest/fakeagent"
)

func main() { os.Exit(fakeagent.Main(os.Args[1:])) }

// Command fakeagent is the fake agent CLI of sessions/testbin/fakeagent,
// built as a program of its own.
package main

import (
	"os"

	"github.com/zwarm/zwarm/sessions/testbin/fakeagent"
)

func main() { os.Exit(fakeagent.Main(os.Args[1:])) }

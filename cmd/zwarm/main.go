// Command zwarm runs coding agents as supervised background workers.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/zwarm/zwarm/cmd/zwarm/internal/cli"
	"github.com/zwarm/zwarm/sessions"
	"github.com/zwarm/zwarm/sessions/proc"
)

// confineCmd runs a command confined to writing where it is told (a
// landing's verify): `zwarm __confine --write PATH... -- CMD ARGS...`, a
// process of its own that confines itself and becomes CMD. It is no
// command of the command line, handed over before any signal handling.
const confineCmd = "__confine"

func main() { os.Exit(runMain(os.Args[1:])) }

// runMain is the process: args on the process's own streams, until an
// interrupt or a SIGTERM cancels it.
func runMain(args []string) int {
	if len(args) > 0 && args[0] == guardCmd {
		return runGuard(args[1:])
	}
	if len(args) > 0 && args[0] == confineCmd {
		return proc.RunConfined(args[1:])
	}
	// The handlers are set before anything else starts: the runtime sets
	// each with a round trip to a thread of its own, quick while the
	// processors are idle, and the whole command 0.2 to 0.4 ms slower
	// when it competes with Prepare's work (docs/performance.md).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if len(args) > 0 && readsRecords(args[0]) {
		sessions.Prepare() // while the line is parsed
	}
	code := run(ctx, args, cli.NewStreams())
	// The outcome is decided: a signal that comes between here and the
	// exit is ignored. Given back its default action it would kill the
	// process, and a shell would report 130 for work that was done (a
	// follow-up delivered whole, say).
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	stop()
	return code
}

// run executes one command line and returns the process exit code.
func run(ctx context.Context, args []string, io *cli.Streams) int {
	f := &factory{io: io}
	root := newRootCmdFor(f, args)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	f.warnBrokenConfig(cmd, err)
	err = f.withWriteHint(err)
	if ctx.Err() != nil && !ownsInterrupt(cmd) && !(err == nil && finishesWhatItStarts(cmd)) {
		return cli.Interrupted(err, io)
	}
	return cli.ExitCode(err, io)
}

// finishesAnnotation marks a command that a signal either stops before it
// has changed anything (it then returns the context's error) or lets
// finish: a nil error from it after a signal means the work was done, and
// said so, and the exit is 0.
const finishesAnnotation = "zwarm/finishes-what-it-starts"

func finishesWhatItStarts(c *cobra.Command) bool {
	return c != nil && c.Annotations[finishesAnnotation] == "true"
}

// ownsInterruptAnnotation marks a command that takes Ctrl+C as input
// (pilot: it stops the model's turn, and only at the prompt leaves): its
// own result decides the exit code, 130 when it says it was interrupted.
const ownsInterruptAnnotation = "zwarm/owns-interrupt"

func ownsInterrupt(c *cobra.Command) bool {
	return c != nil && c.Annotations[ownsInterruptAnnotation] == "true"
}

// Command zwarm runs coding agents as supervised background workers.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], newStreams())
	stop()
	os.Exit(code)
}

// run executes one command line and returns the process exit code.
func run(ctx context.Context, args []string, io *streams) int {
	root := newRootCmd(io)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if ctx.Err() != nil && !(err == nil && finishesWhatItStarts(cmd)) {
		return interrupted(err, io)
	}
	return exitCode(err, io)
}

// finishesAnnotation marks a command that a signal either stops before it
// has changed anything (it then returns the context's error) or lets
// finish: a nil error from it after a signal means the work was done, and
// said so, and the exit is 0.
const finishesAnnotation = "zwarm/finishes-what-it-starts"

func finishesWhatItStarts(c *cobra.Command) bool {
	return c != nil && c.Annotations[finishesAnnotation] == "true"
}

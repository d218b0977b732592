// Command zwarm runs coding agents as supervised background workers.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() { os.Exit(runMain(os.Args[1:])) }

// runMain is the process: args on the process's own streams, until an
// interrupt or a SIGTERM cancels it.
func runMain(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, newStreams())
}

// run executes one command line and returns the process exit code.
func run(ctx context.Context, args []string, io *streams) int {
	root := newRootCmd(&factory{io: io})
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if ctx.Err() != nil {
		return interrupted(err, io)
	}
	return exitCode(err, io)
}

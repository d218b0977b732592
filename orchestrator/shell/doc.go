// Package shell implements the orchestrator's two shell tools, exec_command
// and write_stdin, modelled on the Codex CLI's "unified exec" tools.
//
// A Manager runs each command as `shell -lc cmd` (or `-c`) in a new session,
// under a 24x80 pseudo-terminal by default or with pipes when tty is false.
// Exec returns when the command exits or its yield time passes; a command
// still running keeps a session id that WriteStdin writes to and polls.
// Between calls every process's output is drained continuously into a
// buffer of at most 1 MiB that keeps the first and last halves, so a chatty
// process never blocks and both its oldest and newest output survive.
//
// Results are bounded in tokens (approximated as ceil(bytes/4)): Truncate
// keeps the beginning and end of the output and replaces the middle with a
// "…N tokens truncated…" line. Result.String renders the text the model
// reads:
//
//	Wall time: 1.234 seconds
//	Process exited with code 0          (or: Process running with session ID 1001)
//	Original token count: 20            (only when the output was truncated)
//	Output:
//	<output>
//
// Output is kept as the process wrote it, ANSI sequences included; only the
// terminal's CRLF line endings become LF. Commands run with pagers disabled
// (PAGER=cat and friends) and TERM=dumb, NO_COLOR=1, so that tools which
// would wait on a pager or paint colours print plain text instead.
//
// Close ends the run: it signals every process session the manager started
// (SIGHUP and SIGTERM, then SIGKILL after a grace period), including the
// grandchildren of commands that already exited, and waits for them. A
// process that left its session (setsid) is beyond Close: with
// Options.Cgroup every command starts in a cgroup the owner kills.
//
// The package imports no other zwarm package: the orchestrator and
// `zwarm mcp` both build on it.
package shell

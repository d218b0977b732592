// Package sessions is the core of zwarm: the state directory, the session
// record, the supervisor that runs agent turns, process control, and the
// normalized events every agent's output is parsed into. It imports no
// other zwarm package; adapters implement its Adapter interface.
//
// # State directory
//
// The default is .zwarm/ under the current directory (--state-dir or
// ZWARM_STATE_DIR override it). Directories are created 0700 and files 0600:
// transcripts hold code and secrets.
//
//	config.toml                      settings (Config); unknown keys are an error
//	codex.toml, claude.toml          per-agent settings, read by the adapters
//	sessions/<id>/meta.json          the Session record, replaced atomically
//	sessions/<id>/.lock              flock(2) held while the record is changed
//	sessions/<id>/turns/turn_N.jsonl the agent's stdout for turn N, byte for byte
//	sessions/<id>/turns/turn_N.stderr the agent's stderr for turn N
//	sessions/<id>/inbox/<seq>-<id>.json  one follow-up each (InboxEntry)
//	sessions/<id>/supervisor.log     the supervisor's own diagnostics
//
// Session ids are uuid4 strings. Commands accept any unique prefix; input
// that is not hex digits and dashes is rejected before it reaches a path.
//
// meta.json is the Session type as JSON with "version": 1. Readers never
// need more than meta.json for a finished session: the supervisor keeps the
// summary (status, exit_code, usage, cost_usd, last_message, error) and one
// record per turn (n, prompt, started_at, ended_at, exit_code, status,
// usage, cost_usd, offset) current. While a turn runs, offset says how many
// bytes of turn_N.jsonl the record already reflects; readers parse only the
// bytes after it. A meta.json without "version" was written by the Python
// zwarm: it is shown, never changed.
//
// Every writer (spawn, the supervisor, inject, kill, rm) changes meta.json
// under the session's lock, writing a temporary file and renaming it over
// the old one, so a reader always sees a whole record and no update is lost
// to a concurrent one.
//
// # Lifecycle
//
//	pending ─► running ─► completed | failed | killed
//
// A finished session goes back to pending, then running, when a follow-up
// starts. "failed" means the agent reported failure or exited non-zero, or
// zwarm could not start it; "killed" means zwarm stopped it.
//
// The record names its owner: the process that is spawning the session
// (role "spawn") and then its supervisor (role "supervisor"), each as a pid
// with its start time, so a reused pid is never taken for the owner. A
// reader that finds an unfinished session whose owner is gone records it as
// failed with an error saying so: a status is never a guess.
//
// # Supervision
//
// Spawn starts `zwarm __supervise --detach ID`, which starts the supervisor
// in a new session (setsid) and exits, so the supervisor outlives the
// command and is nobody's zombie. The supervisor makes itself a child
// subreaper, then runs one turn after another: the task, then each queued
// follow-up in order. Each agent runs in its own process group with stdin
// /dev/null, stdout and stderr to the turn files, SIGKILL as its parent-death
// signal, and ZWARM_SESSION_ID=<id> in its environment, which every
// descendant inherits. When the agent exits, everything left of the session
// is killed: the supervisor's descendants and every process carrying the
// marker, including those that left the group with setsid. The exit status
// recorded is the agent's (128+N for a signal).
//
// A follow-up to a running session is queued in the inbox and delivered
// when the running turn ends; one to a finished session starts a new
// supervisor at once. Both use the agent's native resume (the thread id the
// first turn reported). Every follow-up is delivered exactly once, in
// order, or marked undelivered with the reason (the session was killed, its
// supervisor died).
//
// Kill sends SIGTERM to the supervisor, which gives the agent's group
// SIGTERM, the grace period (config kill_grace, default 5s), then SIGKILL,
// sweeps every remaining process of the session, records "killed" and
// exits. If the supervisor is gone, Kill does the same itself.
//
// # Events
//
// Adapters parse their agent's output lines into Event values. A line that
// is not an event (stderr mixed in by older tools, a line cut short by a
// kill) becomes EventRaw; an event type the parser does not know becomes
// EventUnknown with the type in Text. Parsers never fail. Items an agent
// reports several times (started, updated, completed) carry Phase and
// ItemID; Steps folds them into one step each.
//
//	thread.started  ThreadID: the agent's conversation id, used to resume
//	turn.started    the agent began working on the prompt
//	message         Text: a message of the agent to the user
//	reasoning       Text: the agent's reasoning summary
//	command         Command, Output, ExitCode (nil while running), Status
//	file_change     Changes: [{path, kind: add|update|delete}]
//	todo_list       Todos: [{text, completed}]
//	tool_call       Tool, Input (JSON or text), Output, Text (its error)
//	tool_result     Output: what a tool returned, ItemID names the call
//	turn.completed  Usage; Cumulative when it is the thread's running total
//	                (codex), else this turn's own (claude); CostUSD if the
//	                agent reported a price
//	turn.failed     Text: why the agent gave up
//	error           Text: a non-fatal error; kept as the failure reason if
//	                the agent exits non-zero without a turn.failed
//	retry           Text: the agent is retrying the model
//	unknown, raw    see above
//
// Lines are complete only with their newline: a reader of a running turn
// holds back a partial last line until it is finished. Lines up to
// MaxLineBytes are parsed whole; a longer one becomes a raw event saying it
// was skipped.
package sessions
